"""The MCP tools: module-level functions in one list, the one error mapping they share, and the server.

Every tool reads through :func:`reader`, the caller's :class:`~kubevec.query.scoped.ScopedSearch`;
a :class:`~kubevec.core.errors.KubevecError` becomes a tool error whose message (its first line) says
what to change, in one place (:func:`tool_errors`). The tools are those of the table
(``kubevec.query.tools.TOOLS``): a tool written out here presents its answer its own way (typed
output, compact text); any other is generated from its request (:func:`generated`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Final, Literal, ParamSpec, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from kubevec.core.errors import KubevecError
from kubevec.core.version import kubevec_version
from kubevec.inference.documents import Collection
from kubevec.query import tools as table
from kubevec.query.changes import ChangesRequest
from kubevec.query.mcp.schemas import (
    ChangeList,
    FacetCounts,
    KindInfo,
    RelatedObjects,
    ResolvedKinds,
    SearchHit,
    SearchResults,
    StoredDocument,
)
from kubevec.query.render import as_json, compact
from kubevec.query.request import MAX_K, SearchRequest
from kubevec.query.scoped import ScopedSearch
from kubevec.query.tools import Tool, build
from kubevec.query.views import View

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

ClusterName = Annotated[str | None, Field(description=SearchRequest.model_fields["cluster"].description)]
OutputFormat = Annotated[Literal["compact", "json"], Field(description="compact text (few tokens) or JSON.")]

INSTRUCTIONS = (
    "kubevec indexes a Kubernetes cluster. Use vector_search with collection='capabilities' to find which "
    "resource type provides something (e.g. a managed Postgres), and collection='instances' to find live "
    "objects (e.g. what runs the payments API in prod). Use list_facets to see which kinds or namespaces exist "
    "before filtering, get_document to read one document in full, resolve_kind before writing a manifest, "
    "related to see what an object uses and what uses it, and list_changes to see what changed (since='2h')."
)

#: Every tool only reads kubevec's own index: clients may run them without asking.
READ_ONLY: Final = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

#: Where :class:`HttpGuard` leaves the caller's view for the tools (the request's ASGI state).
VIEW_STATE: Final = "kubevec_view"


def tool_errors(tool: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """The one error mapping of every tool: a :class:`KubevecError` is a tool error with its first line.

    Anything else is a bug: the SDK reports it as an internal error, and the traceback stays in the log.
    """

    @functools.wraps(tool)
    async def mapped(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await tool(*args, **kwargs)
        except KubevecError as exc:
            raise ToolError(exc.first_line()) from exc

    return mapped


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


def reader(ctx: Context | None) -> ScopedSearch:
    """The reader of this call's caller: what every tool reads through (it is never given the service)."""
    if ctx is None:
        raise ToolError("Not authenticated")
    server = cast("KubevecServer", ctx.mcp_server)
    return server.scoped(caller_view(ctx, required=server.require_view))


def _answer(text: str, structured: BaseModel) -> CallToolResult:
    """Text for the model (compact by default), and the same data typed, per the tool's output schema."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured.model_dump(by_alias=True)
    )


# -- the tools --------------------------------------------------------------------------------------


@tool_errors
async def vector_search(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
    """Search the cluster index by meaning, words and metadata, in one call.

    Ask (query) to find an object: name it when you know its name, kind or namespace ("pod checkout in
    prod", "network policy for redis"), and say "failing"/"crashing" to see what is broken first.
    List (no query, filter only) or count (count_by) to answer about every object of a kind: "images of
    every Pod" is kind=Pod with count_by=images; "Deployments without limits" is kind=Deployment and
    filter {"resource_limits": {"$ne": "all"}}; "what is broken" is filter {"health": "degraded"},
    count_by=health_reason or container_reasons (OOMKilled, ImagePullBackOff); "who is bound to
    cluster-admin" is filter {"role": "ClusterRole/cluster-admin"}, count_by=subjects. A ranked answer
    holds at most k objects; a listing holds them all, a page at a time."""
    output = arguments.pop("format", "compact")
    results = await reader(ctx).search(SearchRequest.build(**arguments))
    typed = SearchResults(results=[SearchHit(**r.to_json()) for r in results], **results.meta())
    text = as_json(results) if output == "json" else compact(results)
    if results.degraded:
        text = f"Note: {results.degraded}.\n{text}"
    return _answer(text, typed)


def request_signature(model: type[BaseModel] = SearchRequest, *, output: bool = True) -> inspect.Signature:
    """A tool's parameters: the fields of its request (``vector_search``'s: :class:`SearchRequest`), plus the
    output format when it has one.

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
        for name, field in model.model_fields.items()
    ]
    if output:
        parameters.append(
            inspect.Parameter("format", inspect.Parameter.KEYWORD_ONLY, default="compact", annotation=OutputFormat)
        )
    parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context))
    if not output:
        return inspect.Signature(parameters, return_annotation=CallToolResult)
    return inspect.Signature(parameters, return_annotation=Annotated[CallToolResult, SearchResults])


vector_search.__signature__ = request_signature()  # type: ignore[attr-defined]


@tool_errors
async def get_document(
    id: Annotated[str, Field(description="The document id.")],
    collection: Annotated[
        Collection | None,
        Field(description="capabilities or instances; by default taken from the id's shape"),
    ] = None,
    cluster: ClusterName = None,
    ctx: Context | None = None,
) -> Annotated[CallToolResult, StoredDocument]:
    """Read one document (text and metadata) by its id, as returned by vector_search."""
    found = await reader(ctx).find_document(id, collection=collection, cluster=cluster)
    if found is None:
        searched = collection or "capabilities or instances"
        raise ToolError(f"No document {id!r} in {searched}; ids come from vector_search results")
    result, where = found
    document = StoredDocument(id=result.id, collection=where, metadata=dict(result.metadata), text=result.text)
    return _answer(json.dumps(document.model_dump(), indent=2, ensure_ascii=False), document)


@tool_errors
async def resolve_kind(
    name: Annotated[str, Field(description="e.g. Certificate, certificates, cert, certificates.cert-manager.io")],
    cluster: ClusterName = None,
    ctx: Context | None = None,
) -> Annotated[CallToolResult, ResolvedKinds]:
    """Resolve a kind, plural, short name or loose phrase to its API: group, apiVersion, resource, scope, served
    and storage versions, short names and top spec fields. Exact names first, then by meaning. Use it before
    writing a manifest: never guess a CRD's apiVersion."""
    answers = await reader(ctx).resolve_kind(name, cluster=cluster)
    if not answers:
        raise ToolError(f"No resource type matches {name!r}; list_facets(collection='capabilities') shows the kinds")
    return _answer(json.dumps(answers, indent=2), ResolvedKinds(kinds=[KindInfo(**a) for a in answers]))


@tool_errors
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
    """What an object references and what references it, with the relation named (owned-by, uses-secret,
    uses-configmap, mounts-claim, runs-as, selects, routes-to, uses-class, or a custom resource's field such as
    issuerRef). direction='in' answers 'what breaks if I delete this?', 'out' 'what does it need?'. From the
    index alone: no live API calls."""
    answer = await reader(ctx).related(id, hops=hops, direction=direction, cluster=cluster)
    data = answer.to_json()
    text = json.dumps(data, indent=2) if format == "json" else "\n".join(answer.lines())
    return _answer(text, RelatedObjects.model_validate(data))


@tool_errors
async def list_facets(
    collection: Annotated[
        Collection, Field(description=SearchRequest.model_fields["collection"].description)
    ] = "instances",
    field: Annotated[
        str,
        Field(
            description="kind (default), group, namespace, labels, scope, capabilities, providers; for instances "
            "also health, health_reason, container_reasons, images, resource_limits, role, subjects, service_type, node"
        ),
    ] = "kind",
    cluster: ClusterName = None,
    ctx: Context | None = None,
) -> Annotated[CallToolResult, FacetCounts]:
    """Distinct values of a metadata field with counts, e.g. field='kind' or 'namespace'."""
    counts = await reader(ctx).facets(collection, field, cluster=cluster)
    return _answer(json.dumps(counts), FacetCounts(field=field, counts=counts))


@tool_errors
async def list_changes(
    query: Annotated[str | None, Field(description="Pick changes by meaning (e.g. 'payments image').")] = None,
    since: Annotated[
        str | None, Field(description="From this long ago (30m, 2h, 7d) or this ISO 8601 time; default: all kept.")
    ] = None,
    until: Annotated[str | None, Field(description="Up to this long ago or ISO 8601 time; default: now.")] = None,
    namespace: Annotated[str | None, Field(description="Only objects in this namespace.")] = None,
    kind: Annotated[str | None, Field(description="Only this kind, e.g. Deployment.")] = None,
    name: Annotated[str | None, Field(description="Only objects with this name.")] = None,
    change: Annotated[
        Literal["created", "updated", "deleted"] | None, Field(description="Only this kind of change.")
    ] = None,
    cluster: ClusterName = None,
    k: Annotated[int, Field(ge=1, le=MAX_K, description="How many changes (default 20).")] = 20,
    cursor: Annotated[
        str | None, Field(description="The next page of a listing without a query (from the last answer).")
    ] = None,
    format: OutputFormat = "compact",
    ctx: Context | None = None,
) -> Annotated[CallToolResult, ChangeList]:
    """What changed, newest first: one line per observed change of an indexed object (created, deleted, image,
    replicas, labels, spec fields, health with its reason), e.g. 'Deployment prod/api: image repo 2.3.0 -> 2.3.1;
    health healthy -> degraded (ProgressDeadlineExceeded)'. The first question of an incident: give since='2h'
    and a namespace, optionally a query to pick changes by meaning."""
    request = ChangesRequest(
        query=query,
        since=since,
        until=until,
        namespace=namespace,
        kind=kind,
        name=name,
        cluster=cluster,
        change=change,
        k=k,
        cursor=cursor,
    )
    answer = await reader(ctx).changes(request)
    data = answer.to_json()
    text = json.dumps(data, indent=2) if format == "json" else "\n".join(answer.lines())
    if answer.degraded:
        text = f"Note: {answer.degraded}.\n{text}"
    return _answer(text, ChangeList.model_validate(data))


#: The tools written out here, to present their answers their own way (typed output, compact text).
WRITTEN: Final[dict[str, Callable[..., Awaitable[CallToolResult]]]] = {
    tool.__name__: tool for tool in (vector_search, get_document, resolve_kind, related, list_facets, list_changes)
}


def generated(tool: Tool[Any, Any]) -> Callable[..., Awaitable[CallToolResult]]:
    """The MCP tool of a table entry no function here presents: its request's fields are its parameters,
    its answer is JSON (``to_json()`` when it has one)."""

    async def run(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        answer = await reader(ctx).read(tool, build(tool.request, arguments))
        data = answer.to_json() if hasattr(answer, "to_json") else answer
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
        return CallToolResult(content=[TextContent(type="text", text=text)])

    run.__name__ = run.__qualname__ = tool.name
    run.__doc__ = tool.description or tool.help
    run.__signature__ = request_signature(tool.request, output=False)  # type: ignore[attr-defined]
    return tool_errors(run)


def tool_functions() -> tuple[Callable[..., Awaitable[CallToolResult]], ...]:
    """Every tool of the table (``kubevec.query.tools.TOOLS``, read now), in its order: written out or generated."""
    return tuple(WRITTEN.get(tool.name) or generated(tool) for tool in table.TOOLS)


#: Every tool the server serves, in the order clients list them (the table's tools as it was at import).
TOOL_FUNCTIONS: Final = tool_functions()


class KubevecServer(MCPServer):
    """The SDK's server, with argument errors an agent can act on: one line per field, no dump.

    The SDK reports a bad argument with pydantic's text: the input repeated, a documentation URL per
    error. That costs tokens and can echo back whatever the caller sent.
    """

    def __init__(self, scoped: Callable[[View | None], ScopedSearch], *, require_view: bool) -> None:
        super().__init__(name="kubevec", instructions=INSTRUCTIONS, version=kubevec_version())
        #: Makes the reader of a caller's view: the tools are given this, never the service.
        self.scoped = scoped
        #: HTTP: a call whose caller the guard has not judged is refused.
        self.require_view = require_view
        for tool in tool_functions():
            self.add_tool(tool, description=" ".join((tool.__doc__ or "").split()), annotations=READ_ONLY)

    def reader(self, ctx: Context | None) -> ScopedSearch:
        """The reader of ``ctx``'s caller (what each tool reads through)."""
        return self.scoped(caller_view(ctx, required=self.require_view))

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


def build_server(scoped: Callable[[View | None], ScopedSearch], *, require_view: bool = False) -> KubevecServer:
    """The tools, given ``scoped`` (``SearchService.scoped``), never the service: each call reads through
    ``reader(ctx)``, scoped to its caller, so a tool cannot forget the view.

    ``require_view`` (HTTP) refuses any call whose caller the guard has not judged.
    """
    return KubevecServer(scoped, require_view=require_view)
