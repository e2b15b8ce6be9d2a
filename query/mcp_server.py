"""``kubevec mcp``: the search tools for agents, over stdio or streamable HTTP (official ``mcp`` SDK).

Tools: ``vector_search`` (semantic, keyword and metadata filters in one call), ``get_document``
and ``list_facets``. Bad input comes back as a tool error whose message says what to change.
Over HTTP an optional bearer token (``KUBEVEC_MCP_TOKEN``) is required on every request.
"""

from __future__ import annotations

import hmac
import json
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from backends import BackendError
from inference.embedders.base import EmbedderError
from query.render import as_json, compact
from query.search import SearchError, SearchService

CollectionName = Annotated[
    Literal["capabilities", "instances"],
    Field(
        description="capabilities: one document per resource TYPE (which CRD or kind does X?). "
        "instances: one document per live OBJECT (what runs X, where, with which labels?)."
    ),
]

INSTRUCTIONS = (
    "kubevec indexes a Kubernetes cluster. Use vector_search with collection='capabilities' to find which "
    "resource type provides something (e.g. a managed Postgres), and collection='instances' to find live "
    "objects (e.g. what runs the payments API in prod). Use list_facets to see which kinds or namespaces exist "
    "before filtering, and get_document to read one document in full."
)


def build_server(service: SearchService) -> MCPServer:
    server: MCPServer = MCPServer(name="kubevec", instructions=INSTRUCTIONS)

    @server.tool(description="Search the cluster index by meaning, words and metadata, in one call.")
    async def vector_search(
        collection: CollectionName = "capabilities",
        query: Annotated[str | None, Field(description="A natural-language question; embedded once.")] = None,
        keyword: Annotated[
            str | None,
            Field(
                description="Exact words. Alone: keyword search without embedding. With a query: results must contain every word."
            ),
        ] = None,
        filter: Annotated[
            dict[str, Any] | None,
            Field(
                description='Metadata filter JSON, e.g. {"kind": "Deployment", "namespace": {"$in": ["prod", "staging"]}, '
                '"replicas": {"$gt": 1}} or {"op": "eq", "field": "kind", "value": "Service"}. '
                "Operators: $eq $ne $in $nin $gt $gte $lt $lte, $and/$or lists, $contains (words in the text)."
            ),
        ] = None,
        kind: Annotated[str | None, Field(description="Only this Kind, e.g. Deployment or Certificate.")] = None,
        group: Annotated[
            str | None, Field(description="Only this API group, e.g. apps or cert-manager.io ('core' for v1).")
        ] = None,
        namespace: Annotated[str | None, Field(description="Only this namespace (instances).")] = None,
        labels: Annotated[list[str] | None, Field(description="Labels as k=v; all must match (instances).")] = None,
        k: Annotated[int, Field(ge=1, le=50, description="How many results.")] = 5,
        hybrid: Annotated[bool, Field(description="Fuse the meaning ranking with a BM25 word ranking.")] = True,
        mmr: Annotated[bool, Field(description="Diversify results (avoid near-duplicates).")] = False,
        mmr_lambda: Annotated[
            float, Field(ge=0, le=1, description="MMR: 1 = relevance only, 0 = diversity only.")
        ] = 0.5,
        min_score: Annotated[float | None, Field(ge=0, le=1, description="Drop results below this similarity.")] = None,
        format: Annotated[
            Literal["compact", "json"], Field(description="compact text (few tokens) or JSON.")
        ] = "compact",
    ) -> str:
        try:
            results = await service.vector_search(
                collection,
                query=query,
                keyword=keyword,
                filter=filter,
                kind=kind,
                group=group,
                namespace=namespace,
                labels=labels,
                k=k,
                hybrid=hybrid,
                mmr=mmr,
                mmr_lambda=mmr_lambda,
                min_score=min_score,
            )
        except (SearchError, BackendError, EmbedderError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc
        return as_json(results) if format == "json" else compact(results)

    @server.tool(description="Read one document (text and metadata) by its id, as returned by vector_search.")
    async def get_document(
        collection: CollectionName, id: Annotated[str, Field(description="The document id.")]
    ) -> str:
        try:
            result = await service.get_document(collection, id)
        except (SearchError, BackendError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc
        if result is None:
            raise ToolError(f"No document {id!r} in {collection}; ids come from vector_search results")
        return json.dumps({"id": result.id, "metadata": dict(result.metadata), "text": result.text}, indent=2)

    @server.tool(description="Distinct values of a metadata field with counts, e.g. field='kind' or 'namespace'.")
    async def list_facets(
        collection: CollectionName,
        field: Annotated[str, Field(description="kind, group, namespace, labels, scope, capabilities, providers ...")],
    ) -> dict[str, int]:
        try:
            return await service.facets(collection, field)
        except (SearchError, BackendError) as exc:
            raise ToolError(str(exc).splitlines()[0]) from exc

    return server


class BearerTokenGuard:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, *, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
                return
        await self.app(scope, receive, send)


def http_app(service: SearchService, *, host: str, bearer_token: str | None) -> Any:
    app = build_server(service).streamable_http_app(host=host)
    return BearerTokenGuard(app, token=bearer_token) if bearer_token else app


def serve(service: SearchService, *, transport: str, host: str, port: int, bearer_token: str | None) -> None:
    if transport == "stdio":
        build_server(service).run("stdio")
        return
    import uvicorn

    uvicorn.run(http_app(service, host=host, bearer_token=bearer_token), host=host, port=port, log_level="warning")
