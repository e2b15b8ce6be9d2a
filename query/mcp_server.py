"""``kubevec mcp``: the search tools for agents, over stdio or streamable HTTP (official ``mcp`` SDK).

Tools: ``vector_search`` (semantic, keyword and metadata filters in one call), ``get_document``,
``resolve_kind`` (a kind's group, apiVersion, versions and top fields), ``related`` (what an object
references and what references it) and ``list_facets``. Bad input comes back as a tool error whose
message says what to change.
Over HTTP a bearer token (``KUBEVEC_MCP_TOKEN``) is required on every request but ``/healthz``; a
non-loopback bind without one is refused unless ``--allow-unauthenticated`` is given, and Host/Origin
headers are checked against loopback, the bind address and ``KUBEVEC_MCP_ALLOWED_HOSTS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import inspect
import ipaddress
import json
import logging
import os
import re
import socket
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from io import TextIOWrapper
from typing import Annotated, Any, Final, Literal

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from backends import BackendError
from backends.filters import json_too_deep
from inference.documents import Collection
from inference.providers.embedders.base import EmbedderError
from query.access import Authorizer, ReviewThrottled, ReviewUnavailable, View, everything
from query.limits import Count, Limiter, Limits, Refusal, exposition
from query.render import as_json, compact
from query.request import SearchError, SearchRequest
from query.search import ScopedSearch, SearchService

ClusterName = Annotated[str | None, Field(description=SearchRequest.model_fields["cluster"].description)]
OutputFormat = Annotated[Literal["compact", "json"], Field(description="compact text (few tokens) or JSON.")]

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "kubevec indexes a Kubernetes cluster. Use vector_search with collection='capabilities' to find which "
    "resource type provides something (e.g. a managed Postgres), and collection='instances' to find live "
    "objects (e.g. what runs the payments API in prod). Use list_facets to see which kinds or namespaces exist "
    "before filtering, get_document to read one document in full, resolve_kind before writing a manifest, and "
    "related to see what an object uses and what uses it."
)


def request_signature() -> inspect.Signature:
    """The ``vector_search`` tool's parameters: the fields of :class:`SearchRequest`, plus the output format.

    The MCP SDK derives a tool's input schema from its function signature; spelling the signature
    from the model keeps one definition of every field, bound and description.
    """
    parameters = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=field.default,
            annotation=Annotated[(field.annotation, *field.metadata, Field(description=field.description))],
        )
        for name, field in SearchRequest.model_fields.items()
    ]
    parameters.append(
        inspect.Parameter("format", inspect.Parameter.KEYWORD_ONLY, default="compact", annotation=OutputFormat)
    )
    parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context))
    return inspect.Signature(parameters, return_annotation=Annotated[CallToolResult, SearchResults])


class SearchHit(BaseModel):
    """One result: ``score`` orders the list (``score_kind`` says what it is), ``similarity`` is to the query."""

    id: str
    score: float
    score_kind: str
    similarity: float | None
    label: str
    metadata: dict[str, Any]
    text: str


class SearchResults(BaseModel):
    results: list[SearchHit]


class StoredDocument(BaseModel):
    id: str
    collection: str
    metadata: dict[str, Any]
    text: str


class KindInfo(BaseModel):
    kind: str | None
    group: str
    apiVersion: str | None
    resource: str
    scope: str | None
    servedVersions: list[str]
    storageVersion: str | None
    shortNames: list[str]
    topFields: list[str]
    id: str
    match: Literal["exact", "semantic"]
    similarity: float | None = None


class ResolvedKinds(BaseModel):
    kinds: list[KindInfo]


class RelatedObject(BaseModel):
    key: str
    id: str | None
    kind: str
    namespace: str | None
    name: str
    cluster: str | None
    stored: bool
    health: str | None = None
    ready: bool | None = None
    phase: str | None = None


class Relation(BaseModel):
    hop: int
    direction: Literal["out", "in"]
    relation: str
    from_: RelatedObject = Field(alias="from")
    to: RelatedObject


class RelatedObjects(BaseModel):
    subject: RelatedObject
    hops: int
    direction: Literal["out", "in", "both"]
    edges: list[Relation]
    truncated: bool


class FacetCounts(BaseModel):
    field: str
    counts: dict[str, int]


def _answer(text: str, structured: BaseModel) -> CallToolResult:
    """Text for the model (compact by default), and the same data typed, per the tool's output schema."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured.model_dump(by_alias=True)
    )


#: Every tool only reads kubevec's own index: clients may run them without asking.
READ_ONLY: Final = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def server_version() -> str:
    try:
        return importlib.metadata.version("kubevec")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class KubevecServer(MCPServer):
    """The SDK's server, with argument errors an agent can act on: one line per field, no dump.

    The SDK reports a bad argument with pydantic's text: the input repeated, a documentation URL per
    error. That costs tokens and can echo back whatever the caller sent.
    """

    #: The caller's reader for a tool call's context (set by :func:`build_server`): every tool reads through it.
    reader: Callable[[Context | None], ScopedSearch]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                for error in exc.__cause__.errors(include_input=False, include_url=False)
            )
            raise ToolError(f"Invalid arguments for {name}: {problems}") from None


#: Where :class:`HttpGuard` leaves the caller's view for the tools (the request's ASGI state).
VIEW_STATE: Final = "kubevec_view"


def caller_view(ctx: Context | None, *, required: bool) -> View | None:
    """The view of the caller of this tool call: None (everything) over stdio, the guard's over HTTP.

    ``required`` (HTTP): a call that reaches a tool without a view (no request in its context, or a
    request the guard did not see) is refused, so nothing is shown by default.
    """
    request = None
    if ctx is not None:
        with contextlib.suppress(ValueError):
            request = ctx.request_context.request
    state = getattr(request, "state", None)
    view = getattr(state, VIEW_STATE, None) if state is not None else None
    if isinstance(view, View):
        return view
    if required or request is not None:
        raise ToolError("Not authenticated")
    return None


def build_server(scoped: Callable[[View | None], ScopedSearch], *, require_view: bool = False) -> KubevecServer:
    """The tools, given ``scoped`` (``SearchService.scoped``), never the service: each call reads through
    ``server.reader(ctx)``, scoped to its caller, so a tool cannot forget the view.

    ``require_view`` (HTTP) refuses any call whose caller the guard has not judged.
    """
    server = KubevecServer(name="kubevec", instructions=INSTRUCTIONS, version=server_version())
    server.reader = lambda ctx: scoped(caller_view(ctx, required=require_view))

    async def vector_search(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        output = arguments.pop("format", "compact")
        reader = server.reader(ctx)
        try:
            results = await reader.search(SearchRequest.build(**arguments))
        except (SearchError, BackendError, EmbedderError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc
        typed = SearchResults(results=[SearchHit(**r.to_json()) for r in results])
        return _answer(as_json(results) if output == "json" else compact(results), typed)

    vector_search.__signature__ = request_signature()  # type: ignore[attr-defined]
    server.add_tool(
        vector_search,
        description="Search the cluster index by meaning, words and metadata, in one call.",
        annotations=READ_ONLY,
    )

    @server.tool(
        description="Read one document (text and metadata) by its id, as returned by vector_search.",
        annotations=READ_ONLY,
    )
    async def get_document(
        id: Annotated[str, Field(description="The document id.")],
        collection: Annotated[
            Collection | None,
            Field(description="capabilities or instances; by default taken from the id's shape"),
        ] = None,
        cluster: ClusterName = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, StoredDocument]:
        try:
            found = await server.reader(ctx).find_document(id, collection=collection, cluster=cluster)
        except (SearchError, BackendError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc
        if found is None:
            searched = collection or "capabilities or instances"
            raise ToolError(f"No document {id!r} in {searched}; ids come from vector_search results")
        result, where = found
        document = StoredDocument(id=result.id, collection=where, metadata=dict(result.metadata), text=result.text)
        return _answer(json.dumps(document.model_dump(), indent=2, ensure_ascii=False), document)

    @server.tool(
        description=(
            "Resolve a kind, plural, short name or loose phrase to its API: group, apiVersion, resource, scope, "
            "served and storage versions, short names and top spec fields. Exact names first, then by meaning. "
            "Use it before writing a manifest: never guess a CRD's apiVersion."
        ),
        annotations=READ_ONLY,
    )
    async def resolve_kind(
        name: Annotated[str, Field(description="e.g. Certificate, certificates, cert, certificates.cert-manager.io")],
        cluster: ClusterName = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, ResolvedKinds]:
        try:
            answers = await server.reader(ctx).resolve_kind(name, cluster=cluster)
        except (SearchError, BackendError, EmbedderError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc
        if not answers:
            raise ToolError(
                f"No resource type matches {name!r}; list_facets(collection='capabilities') shows the kinds"
            )
        return _answer(json.dumps(answers, indent=2), ResolvedKinds(kinds=[KindInfo(**a) for a in answers]))

    @server.tool(
        description=(
            "What an object references and what references it, with the relation named (owned-by, uses-secret, "
            "uses-configmap, mounts-claim, runs-as, selects, routes-to, uses-class, or a custom resource's field "
            "such as issuerRef). direction='in' answers 'what breaks if I delete this?', 'out' 'what does it need?'. "
            "From the index alone: no live API calls."
        ),
        annotations=READ_ONLY,
    )
    async def related(
        id: Annotated[
            str,
            Field(description="An instance id from vector_search, or Kind/namespace/name (Kind/_cluster/name)."),
        ],
        hops: Annotated[int, Field(ge=1, le=3, description="1 (default) to 3; later hops keep the direction.")] = 1,
        direction: Annotated[
            Literal["out", "in", "both"], Field(description="out: what it uses; in: what uses it; both (default).")
        ] = "both",
        cluster: ClusterName = None,
        format: OutputFormat = "compact",
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, RelatedObjects]:
        try:
            answer = await server.reader(ctx).related(id, hops=hops, direction=direction, cluster=cluster)
        except (SearchError, BackendError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc
        data = answer.to_json()
        text = json.dumps(data, indent=2) if format == "json" else "\n".join(answer.lines())
        return _answer(text, RelatedObjects.model_validate(data))

    @server.tool(
        description="Distinct values of a metadata field with counts, e.g. field='kind' or 'namespace'.",
        annotations=READ_ONLY,
    )
    async def list_facets(
        collection: Annotated[
            Collection, Field(description=SearchRequest.model_fields["collection"].description)
        ] = "instances",
        field: Annotated[
            str, Field(description="kind (default), group, namespace, labels, scope, capabilities, providers ...")
        ] = "kind",
        cluster: ClusterName = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, FacetCounts]:
        try:
            counts = await server.reader(ctx).facets(collection, field, cluster=cluster)
        except (SearchError, BackendError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc
        return _answer(json.dumps(counts), FacetCounts(field=field, counts=counts))

    return server


LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS: Final = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


class UnsafeBind(ValueError):
    """Serving over HTTP on a non-loopback address without a token, and without saying so."""


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
        self, app: Any, *, authorizer: Authorizer, limits: Limits | None = None, metrics: bool = False
    ) -> None:
        self.app = app
        self.authorizer = authorizer
        self.limiter = Limiter(limits or Limits())
        self.metrics = metrics
        self._owners: dict[str, str] = {}
        self._in_flight: set[tuple[str, str, str | int]] = set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") == "/healthz":
            await _respond(send, 200, b"ok")
            return
        if scope.get("path") == "/metrics" and self.metrics:  # `kubevec mcp` has no other metrics port
            await _respond(send, 200, exposition(self.counts()).encode())
            return
        headers = dict(scope.get("headers") or [])
        view = everything("anonymous")
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
                await _respond(send, 401, b"missing or wrong bearer token", [(b"www-authenticate", b"Bearer")])
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
            logger.info("Refused an MCP request caller=%s reason=%s", clip(view.caller, 80), refusal.reason)
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
                _rpc_error(_echoable(request_id(text)), f"Request is nested deeper than {MAX_MESSAGE_DEPTH} levels"),
            )
            return
        ids = _request_ids(text)
        keys = {(session, type(i).__name__, i) for i in ids}
        clash = next((i for i in ids if (session, type(i).__name__, i) in self._in_flight), None)
        if clash is not None:  # the SDK would route both answers to one stream and neither caller would get one
            logger.warning(
                "Refused a request reusing an id in flight caller=%s id=%s", view.caller, clip(repr(clash), 80)
            )
            message = f"Request id {clip(repr(clash), 80)} is already in use in this session; use a new id"
            await _respond_json(send, 409, _rpc_error(_echoable(clash), message))
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
        ]

    def _recording(self, send: Any, *, caller: str, session: str, scope: dict[str, Any]) -> Any:
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


def _request_ids(text: str) -> list[str | int]:
    """The ids of the JSON-RPC requests in a POST body (one message or a batch); [] if it is not JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    messages = data if isinstance(data, list) else [data]
    return [
        m["id"]
        for m in messages
        if isinstance(m, dict)
        and "method" in m
        and isinstance(m.get("id"), str | int)
        and not isinstance(m["id"], bool)
    ]


def _echoable(id: str | int | None) -> str | int | None:
    """An id to answer with: a caller's 1 MB id is not sent back (the error says what it was, clipped)."""
    return id if id is None or len(repr(id)) <= 200 else None


def _rpc_error(id: str | int | None, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": INVALID_REQUEST, "message": message}}


async def _respond_json(send: Any, status: int, payload: dict[str, Any]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


def clip(text: str, limit: int = 200) -> str:
    """At most ``limit`` characters of something a caller sent, for a log line."""
    return text if len(text) <= limit else f"{text[:limit]}...(+{len(text) - limit} chars)"


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
) -> HttpGuard:
    """The MCP app over streamable HTTP; refuses a public bind without authentication unless told otherwise.

    ``authorizer`` says who may call and what each caller sees; without one, ``bearer_token`` (if
    any) is the one token, which sees everything."""
    authorizer = authorizer or Authorizer(cluster="", full_token=bearer_token)
    limits = limits or Limits()
    if not authorizer.required and not is_loopback(host):
        if not allow_unauthenticated:
            raise UnsafeBind(
                f"refusing to serve MCP on {host} without authentication: set KUBEVEC_MCP_TOKEN, "
                "bind 127.0.0.1, or pass --allow-unauthenticated"
            )
        logger.warning("Serving MCP without authentication host=%s (--allow-unauthenticated)", host)
    security = transport_security(host=host, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    app = build_server(service.scoped, require_view=True).streamable_http_app(
        host=host,
        transport_security=security,
        session_idle_timeout=limits.session_idle_seconds,
        max_sessions=limits.sessions,
    )
    return HttpGuard(app, authorizer=authorizer, limits=limits, metrics=metrics)


#: Deeper JSON-RPC messages are answered with an error before any parser sees them (the SDK's
#: parser recurses per level; a valid request is nowhere near this deep).
MAX_MESSAGE_DEPTH: Final = 64
INVALID_REQUEST: Final = -32600
_ID_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"\s*:|"(?:[^"\\]|\\.)*"|[\[\]{}]|-?\d+')


def request_id(line: str) -> str | int | None:
    """The top-level ``"id"`` of a JSON-RPC message, found without parsing it (it may be hostile)."""
    depth = 0
    want = False
    for match in _ID_TOKENS.finditer(line):
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
        elif want:
            value = json.loads(token)
            return value if isinstance(value, str | int) else None
        elif depth == 1 and token.endswith(":") and json.loads(token[:-1].rstrip()) == "id":
            want = True
    return None


class GuardedStdio:
    """stdin/stdout for the SDK's stdio transport that answer too-deep requests themselves.

    A too-deep line never reaches the SDK (whose JSON parser would fail and answer nothing, so the
    client would wait forever); it gets a JSON-RPC error with its own id instead. Both writers take
    one lock per line, so answers never interleave.
    """

    def __init__(self, *, stdin: anyio.AsyncFile[str], stdout: anyio.AsyncFile[str]) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._lock = anyio.Lock()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._stdin:
            if not json_too_deep(line, limit=MAX_MESSAGE_DEPTH):
                yield line
                continue
            error = {
                "jsonrpc": "2.0",
                "id": request_id(line),
                "error": {
                    "code": INVALID_REQUEST,
                    "message": f"Request is nested deeper than {MAX_MESSAGE_DEPTH} levels (filters allow 8)",
                },
            }
            await self.write(json.dumps(error) + "\n")
            await self.flush()

    async def write(self, data: str) -> None:
        async with self._lock:
            await self._stdout.write(data)

    async def flush(self) -> None:
        async with self._lock:
            await self._stdout.flush()


async def run_stdio(server: MCPServer, warm: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
    """Serve over stdin/stdout; fd 1 points at stderr meanwhile, so stray prints miss the wire.

    ``warm`` runs beside the server from the start (the search service's index builds)."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    stdin = anyio.wrap_file(TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(TextIOWrapper(wire_out, encoding="utf-8"))
    guard = GuardedStdio(stdin=stdin, stdout=stdout)
    async with (
        stdio_server(stdin=guard, stdout=guard) as (read_stream, write_stream),  # type: ignore[arg-type]
        anyio.create_task_group() as tasks,
    ):
        if warm is not None:
            tasks.start_soon(warm)
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        tasks.cancel_scope.cancel()  # the client is gone: a build still running is not waited for


def serve(
    service: SearchService,
    *,
    transport: str,
    host: str,
    port: int,
    authorizer: Authorizer,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    limits: Limits | None = None,
) -> None:
    if transport == "stdio":
        anyio.run(run_stdio, build_server(service.scoped), service.warm)
        return
    app = http_app(
        service,
        host=host,
        authorizer=authorizer,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        allow_unauthenticated=allow_unauthenticated,
        limits=limits,
        metrics=True,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")


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
