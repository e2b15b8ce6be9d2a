"""MCP over streamable HTTP: the guard in front of the SDK's app (who is calling, limits, sessions),
the DNS-rebinding checks, the one bind check, and the server embedded in ``kubevec run``.

A bearer token is required on every request but ``/healthz`` (and ``/metrics`` of ``kubevec mcp``);
a non-loopback bind without any way of authenticating is refused unless explicitly allowed, and
Host/Origin headers are checked against loopback, the bind address and ``KUBEVEC_MCP_ALLOWED_HOSTS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import json
import logging
import socket
from collections.abc import Iterator, Sequence
from typing import Any, Final

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from prometheus_client import CollectorRegistry, generate_latest

from kubevec.core.errors import ReviewUnavailable, UnsafeBind
from kubevec.core.nesting import json_too_deep
from kubevec.query.access import Authorizer
from kubevec.query.limits import AccessCollector, Caller, Count, Limiter, Limits, Refusal
from kubevec.query.mcp.jsonrpc import MAX_MESSAGE_DEPTH, clip, echoable, request_id, request_ids, rpc_error
from kubevec.query.mcp.tools import VIEW_STATE, build_server
from kubevec.query.oauth_metadata import ResourceMetadata
from kubevec.query.review_budget import ReviewThrottled
from kubevec.query.search import SearchService
from kubevec.query.views import View, everything

logger = logging.getLogger(__name__)

LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS: Final = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


def check_bind(host: str, *, authenticated: bool, allow_unauthenticated: bool = False, port: int | None = None) -> None:
    """The one bind check of every MCP server (``kubevec mcp``, ``kubevec run``): a public address needs a
    way of authenticating, or an explicit ``--allow-unauthenticated``; :class:`UnsafeBind` otherwise."""
    if authenticated or is_loopback(host):
        return
    where = f"{host}:{port}" if port else host
    if not allow_unauthenticated:
        raise UnsafeBind(
            f"refusing to serve MCP on {where} without authentication: set KUBEVEC_MCP_KUBERNETES_AUTH=true, "
            "KUBEVEC_MCP_TOKENS_FILE or KUBEVEC_MCP_TOKEN, bind 127.0.0.1, or pass --allow-unauthenticated"
        )
    logger.warning("Serving MCP without authentication host=%s (--allow-unauthenticated)", host)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class HttpGuard:
    """ASGI middleware in front of the MCP app: an open ``/healthz``, then who is calling.

    ``/healthz`` answers without a token and without Host checks, so kubelet probes (which use the
    pod IP as Host) work. Everything else needs ``Authorization: Bearer <token>`` when any way of
    authenticating is configured; the caller's :class:`View` is left in the request's state for the
    tools. A session belongs to the caller that opened it: another caller's token with its session
    id is answered 404, as an unknown session is.
    """

    def __init__(
        self,
        app: Any,
        *,
        authorizer: Authorizer,
        limits: Limits | None = None,
        metrics: bool = False,
        discovery: ResourceMetadata | None = None,
    ) -> None:
        self.app = app
        self.authorizer = authorizer
        #: RFC 9728 metadata naming the OIDC issuer (``KUBEVEC_MCP_OIDC_ISSUER``); None: not served.
        self.discovery = discovery
        self.limiter = Limiter(limits or Limits())
        #: Its own registry, served on ``/metrics`` when asked (``kubevec mcp`` has no other metrics port).
        self.metrics: CollectorRegistry | None = None
        if metrics:
            self.metrics = CollectorRegistry()
            self.metrics.register(AccessCollector(self.counts))
        self._owners: dict[str, Caller] = {}
        self._in_flight: set[tuple[str, str, str | int]] = set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") == "/healthz":
            await _respond(send, 200, b"ok")
            return
        if scope.get("path") == "/metrics" and self.metrics is not None:
            await _respond(send, 200, generate_latest(self.metrics))
            return
        if self.discovery is not None and self.discovery.serves(str(scope.get("path", ""))):
            document = self.discovery.document(scope)  # public: it holds no secret
            if document is None:
                await _respond(send, 421, b"this Host is not served here; set KUBEVEC_MCP_RESOURCE_URL")
                return
            await _respond_json(send, 200, document)
            return
        headers = dict(scope.get("headers") or [])
        view = everything(Caller("anonymous", ""))
        if self.authorizer.required:
            given = headers.get(b"authorization", b"").decode("latin-1")
            scheme, _, token = given.partition(" ")
            try:
                found = await self.authorizer.view_for(token.strip() if scheme.lower() == "bearer" else None)
            except ReviewThrottled as exc:
                logger.warning("Refused an MCP request: review budget spent error=%s", clip(str(exc)))
                self.limiter.count("review_budget")
                await _refuse(send, Refusal(503, "review_budget", exc.retry_after or 1.0, "too many new callers"))
                return
            except ReviewUnavailable as exc:
                logger.warning("Refused an MCP request: access review failed error=%s", clip(str(exc)))
                self.limiter.count("review_unavailable")
                await _refuse(send, Refusal(503, "review_unavailable", 5.0, "cannot check access now"))
                return
            if found is None:
                self.limiter.count("unauthenticated")
                challenge = self.discovery.challenge(scope) if self.discovery is not None else b"Bearer"
                await _respond(send, 401, b"missing or wrong bearer token", [(b"www-authenticate", challenge)])
                return
            view = found
        session = headers.get(b"mcp-session-id", b"").decode("latin-1")
        if session and self._owners.get(session, view.caller) != view.caller:
            await _respond(send, 404, b"unknown session")
            return
        method = scope.get("method")
        refusal = self.limiter.opening(view.caller) if method == "POST" and not session else None
        hold = method != "GET"
        refusal = refusal or self.limiter.admit(view.caller, hold=hold)
        if refusal is not None:
            logger.info("Refused an MCP request caller=%s reason=%s", clip(str(view.caller), 80), refusal.reason)
            await _refuse(send, refusal)
            return
        try:
            await self._serve(scope, receive, send, view=view, session=session)
        finally:
            if hold:
                self.limiter.done(view.caller)

    async def _serve(self, scope: dict[str, Any], receive: Any, send: Any, *, view: View, session: str) -> None:
        scope.setdefault("state", {})[VIEW_STATE] = view
        if scope.get("method") != "POST" or not session:
            await self.app(scope, receive, self._recording(send, caller=view.caller, session=session, scope=scope))
            return
        body = await _read_body(receive, limit=MAX_BODY)
        if body is None:
            await _respond(send, 413, b"request body too large")
            return
        text = body.decode("utf-8", errors="replace")
        if json_too_deep(text, limit=MAX_MESSAGE_DEPTH):
            await _respond_json(
                send,
                400,
                rpc_error(echoable(request_id(text)), f"Request is nested deeper than {MAX_MESSAGE_DEPTH} levels"),
            )
            return
        ids = request_ids(text)
        keys = {(session, type(i).__name__, i) for i in ids}
        clash = next((i for i in ids if (session, type(i).__name__, i) in self._in_flight), None)
        if clash is not None:  # the SDK would route both answers to one stream and neither caller would get one
            logger.warning(
                "Refused a request reusing an id in flight caller=%s id=%s", view.caller, clip(repr(clash), 80)
            )
            message = f"Request id {clip(repr(clash), 80)} is already in use in this session; use a new id"
            await _respond_json(send, 409, rpc_error(echoable(clash), message))
            return
        self._in_flight |= keys
        try:
            await self.app(
                scope, _replay(body, receive), self._recording(send, caller=view.caller, session=session, scope=scope)
            )
        finally:
            self._in_flight -= keys

    def counts(self) -> list[Count]:
        """What the guard and its authorizer counted, for Prometheus (labelled by reason or kind, never by caller)."""
        static = self.authorizer.static_file
        return [
            Count("kubevec_mcp_refused", "MCP requests refused, by reason", "reason", dict(self.limiter.refused)),
            Count(
                "kubevec_mcp_access_reviews",
                "Questions asked of the API server about MCP callers, by kind",
                "kind",
                dict(self.authorizer.asked),
            ),
            Count(
                "kubevec_mcp_token_file_reloads",
                "Static token file reloads, by result (an error keeps the last good set)",
                "result",
                {"ok": static.reloads if static else 0, "error": static.reload_errors if static else 0},
            ),
            Count(
                "kubevec_mcp_tokens_refused",
                "Tokens of outside identity providers refused, by reason (bad signature, expired, audience...)",
                "reason",
                dict(self.authorizer.outside.refused) if self.authorizer.outside is not None else {},
            ),
        ]

    def _recording(self, send: Any, *, caller: Caller, session: str, scope: dict[str, Any]) -> Any:
        """``send`` that notes who opened each session (the oldest forgotten past ``MAX_OWNERS``) and which ended."""

        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status = int(message.get("status", 200))
                if session:
                    if status == 404 or (scope.get("method") == "DELETE" and status < 300):
                        self.limiter.closed(session)
                    else:
                        self.limiter.used(session)
                for name, value in message.get("headers", []):
                    if name.lower() == b"mcp-session-id" and not session:
                        opened = value.decode("latin-1")
                        self._owners[opened] = caller
                        self.limiter.opened(opened, caller)
                        while len(self._owners) > MAX_OWNERS:
                            del self._owners[next(iter(self._owners))]
            await send(message)

        return wrapped


#: Sessions whose caller is remembered (the SDK's own cap on open sessions is lower).
MAX_OWNERS: Final = 100_000
#: The largest POST body read (the SDK's own limit).
MAX_BODY: Final = 4 * 1024 * 1024


async def _read_body(receive: Any, *, limit: int) -> bytes | None:
    """The whole request body, or None past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """An ASGI ``receive`` that gives ``body`` once, then what the client sends next (its disconnect)."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: dict[str, Any] = await receive()
        return message

    return replayed


async def _respond_json(send: Any, status: int, payload: dict[str, Any]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


async def _refuse(send: Any, refusal: Refusal) -> None:
    """429 (this caller's limit) or 503 (the server's), with when to come back."""
    await _respond(send, refusal.status, refusal.message.encode(), [(b"retry-after", refusal.header)])


async def _respond(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


def transport_security(
    *, host: str, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]
) -> TransportSecuritySettings:
    """Host/Origin checks against DNS rebinding: loopback, the bind address, and what was configured.

    ``*`` in ``allowed_hosts`` turns the checks off (for a gateway that rewrites Host headers).
    """
    if "*" in allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = [*LOOPBACK_HOSTS, *allowed_hosts]
    if host not in ("0.0.0.0", "::") and not is_loopback(host):
        hosts.append(f"{host}:*")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[*LOOPBACK_ORIGINS, *allowed_origins],
    )


def http_app(
    service: SearchService,
    *,
    host: str,
    bearer_token: str | None = None,
    authorizer: Authorizer | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    limits: Limits | None = None,
    metrics: bool = False,
    discovery: ResourceMetadata | None = None,
) -> HttpGuard:
    """The MCP app over streamable HTTP; refuses a public bind without authentication unless told otherwise.

    ``authorizer`` says who may call and what each caller sees; without one, ``bearer_token`` (if
    any) is the one token, which sees everything."""
    authorizer = authorizer or Authorizer(cluster="", full_token=bearer_token)
    limits = limits or Limits()
    check_bind(host, authenticated=authorizer.required, allow_unauthenticated=allow_unauthenticated)
    security = transport_security(host=host, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    app = build_server(service.scoped, require_view=True).streamable_http_app(
        host=host,
        transport_security=security,
        session_idle_timeout=limits.session_idle_seconds,
        max_sessions=limits.sessions,
    )
    if discovery is not None and discovery.allowed_hosts is None and security.enable_dns_rebinding_protection:
        # URLs in the RFC 9728 metadata come from the Hosts this endpoint accepts, never any Host sent
        discovery = dataclasses.replace(discovery, allowed_hosts=tuple(security.allowed_hosts or ()))
    return HttpGuard(app, authorizer=authorizer, limits=limits, metrics=metrics, discovery=discovery)


class _ServerWithoutSignals(uvicorn.Server):
    """uvicorn's server without its own signal handlers: the program it runs in owns SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class EmbeddedHttpServer:
    """The MCP HTTP app served on the event loop of another program (``kubevec run``).

    With an embedded store only the process that writes it sees every write (a second process over
    the same Chroma directory answers from the vectors it loaded at open), so agents are served from
    the controller itself. The socket is bound here, before serving: a port in use is an ``OSError``
    at start, not uvicorn's ``sys.exit``.
    """

    def __init__(self, app: Any, *, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._server = _ServerWithoutSignals(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self._socket: socket.socket | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._socket = socket.create_server((self.host, self.port), family=_family(self.host))
        self.port = int(self._socket.getsockname()[1])
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]), name="kubevec-mcp")
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise RuntimeError("the MCP server stopped while starting")
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._task, timeout=10)
        if self._socket is not None:
            self._socket.close()


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
