"""Callers are typed (kind + name): no user name can own another kind's sessions or spend its caps."""

from __future__ import annotations

from typing import Any

from kubevec.query.limits import Caller, Limits
from kubevec.query.mcp import HttpGuard
from kubevec.query.views import View, everything


class Tokens:
    """An authorizer stand-in: each token is one caller."""

    required = True
    static_file = None
    asked: dict[str, int] = {}  # noqa: RUF012

    def __init__(self, views: dict[str, View]) -> None:
        self.views = views

    async def view_for(self, token: str | None) -> View | None:
        return self.views.get(token or "")


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Opens a session on a POST without one, as the MCP SDK does."""
    headers = [] if scope["headers_in"] else [(b"mcp-session-id", b"s-1")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"{}"})


async def call(guard: HttpGuard, *, token: str, session: str = "") -> int:
    headers = [(b"authorization", f"Bearer {token}".encode())]
    if session:
        headers.append((b"mcp-session-id", session.encode()))
    scope = {"type": "http", "method": "GET", "path": "/mcp", "headers": headers, "headers_in": bool(session)}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await guard(scope, receive, send)
    return int(sent[0]["status"])


async def test_a_user_named_like_a_static_token_cannot_use_its_sessions_or_caps() -> None:
    views = {
        "static-token": everything(Caller("static", "team-a")),
        "user-token": everything(Caller("user", "static:team-a")),  # a user literally named so
        "named-token": everything(Caller("user", "token")),
        "mcp-token": everything(Caller("token", "KUBEVEC_MCP_TOKEN")),
    }
    guard = HttpGuard(app, authorizer=Tokens(views), limits=Limits(caller_sessions=1, sessions=10))  # type: ignore[arg-type]
    assert await call(guard, token="static-token") == 200  # opens s-1
    assert await call(guard, token="static-token", session="s-1") == 200
    assert await call(guard, token="user-token", session="s-1") == 404
    assert await call(guard, token="named-token", session="s-1") == 404
    assert guard.limiter.sessions_of(Caller("static", "team-a")) == 1
    assert guard.limiter.sessions_of(Caller("user", "static:team-a")) == 0
    assert Caller("user", "static:team-a") != Caller("static", "team-a")
