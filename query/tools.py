"""The tool table: every read-side tool once, as its declared request and its reader.

The MCP server's tools, the CLI's reading commands, the scoped reader (``ScopedSearch.read``) and
the names the controller's metrics label by are all derived from :data:`TOOLS`. A new tool is its
request (a pydantic model: its fields, bounds and descriptions become the MCP tool's parameters and
the command's flags) with its reader (``readers/``), and a :class:`Tool` line in :data:`TOOLS`; the
MCP tool and the command are generated (``kubevec.query.mcp.tools``, ``kubevec.controller.cli.search``)
unless one is written out to present its answer its own way.

Importing this module loads no MCP SDK and no argparse: the controller names the tools from here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Final, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kubevec.core.errors import SearchError
from kubevec.inference.collections import Collection
from kubevec.query.answers import Answer, Result
from kubevec.query.changes import Changes, ChangesRequest
from kubevec.query.readers.changes import changes
from kubevec.query.readers.documents import find_document
from kubevec.query.readers.facets import facets
from kubevec.query.readers.kinds import resolve_kind
from kubevec.query.readers.related import related
from kubevec.query.readers.search import read_search
from kubevec.query.related import Related
from kubevec.query.request import SearchRequest, describe
from kubevec.query.sources import Sources
from kubevec.query.views import View

R = TypeVar("R")
A = TypeVar("A")

#: The description of every tool's ``cluster`` parameter.
CLUSTER: Final = SearchRequest.model_fields["cluster"].description


@dataclasses.dataclass(frozen=True, kw_only=True)
class Tool(Generic[R, A]):
    """One tool: what it is called, what it is asked (its request) and who answers (its reader)."""

    #: The MCP tool's name (and the label of its calls in the controller's metrics).
    name: str
    #: The declared request: a pydantic model whose fields are the tool's parameters and the command's flags.
    request: type[R]
    #: Its answer as one caller (``view``; None: everything) sees it.
    read: Callable[[Sources, R, View | None], Awaitable[A]]
    #: The CLI command that runs it, and that command's one line in ``kubevec --help``.
    command: str
    help: str
    #: What an agent reads about the tool (the MCP description), when no written-out tool says it.
    description: str = ""


class ToolRequest(BaseModel):
    """A declared request: immutable, and no field it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class DocumentRequest(ToolRequest):
    id: Annotated[str, Field(description="The document id.")]
    collection: Annotated[
        Collection | None, Field(description="capabilities or instances; by default taken from the id's shape")
    ] = None
    cluster: Annotated[str | None, Field(description=CLUSTER)] = None


class KindRequest(ToolRequest):
    name: Annotated[str, Field(description="e.g. Certificate, certificates, cert, certificates.cert-manager.io")]
    cluster: Annotated[str | None, Field(description=CLUSTER)] = None
    limit: Annotated[int, Field(ge=1, description="At most this many types.")] = 5


class RelatedRequest(ToolRequest):
    id: Annotated[
        str, Field(description="An instance id from vector_search, or Kind/namespace/name (Kind/_cluster/name).")
    ]
    hops: Annotated[int, Field(ge=1, le=3, description="1 (default) to 3; later hops keep the direction.")] = 1
    direction: Annotated[
        Literal["out", "in", "both"], Field(description="out: what it uses; in: what uses it; both (default).")
    ] = "both"
    cluster: Annotated[str | None, Field(description=CLUSTER)] = None


class FacetsRequest(ToolRequest):
    collection: Annotated[Collection, Field(description=SearchRequest.model_fields["collection"].description)] = (
        "instances"
    )
    field: Annotated[str, Field(description="The metadata field, e.g. kind or namespace.")] = "kind"
    limit: Annotated[int, Field(ge=1, description="Most frequent values.")] = 100
    cluster: Annotated[str | None, Field(description=CLUSTER)] = None


async def _search(sources: Sources, request: SearchRequest, view: View | None) -> Answer:
    return await read_search(sources, request, view)


async def _document(sources: Sources, request: DocumentRequest, view: View | None) -> tuple[Result, str] | None:
    return await find_document(sources, request.id, view, collection=request.collection, cluster=request.cluster)


async def _kinds(sources: Sources, request: KindRequest, view: View | None) -> list[dict[str, Any]]:
    return await resolve_kind(sources, request.name, view, limit=request.limit, cluster=request.cluster)


async def _related(sources: Sources, request: RelatedRequest, view: View | None) -> Related:
    return await related(
        sources, request.id, view, hops=request.hops, direction=request.direction, cluster=request.cluster
    )


async def _facets(sources: Sources, request: FacetsRequest, view: View | None) -> dict[str, int]:
    return await facets(sources, request.collection, request.field, view, limit=request.limit, cluster=request.cluster)


VECTOR_SEARCH: Final = Tool[SearchRequest, Answer](
    name="vector_search",
    request=SearchRequest,
    read=_search,
    command="search",
    help="search the capabilities or instances collection",
)
GET_DOCUMENT: Final = Tool[DocumentRequest, tuple[Result, str] | None](
    name="get_document",
    request=DocumentRequest,
    read=_document,
    command="get",
    help="print one stored document (text and metadata) by its id",
)
RESOLVE_KIND: Final = Tool[KindRequest, list[dict[str, Any]]](
    name="resolve_kind",
    request=KindRequest,
    read=_kinds,
    command="resolve",
    help="a kind's group, apiVersion, versions, scope and top fields",
)
RELATED: Final = Tool[RelatedRequest, Related](
    name="related",
    request=RelatedRequest,
    read=_related,
    command="related",
    help="what an object references and what references it (from the index)",
)
LIST_FACETS: Final = Tool[FacetsRequest, dict[str, int]](
    name="list_facets",
    request=FacetsRequest,
    read=_facets,
    command="facets",
    help="distinct values of a metadata field with their counts",
)
LIST_CHANGES: Final = Tool[ChangesRequest, Changes](
    name="list_changes",
    request=ChangesRequest,
    read=changes,
    command="changes",
    help="what changed, newest first (the change history the controller records)",
)

#: Every tool, in the order MCP clients list them and ``kubevec --help`` lists their commands.
TOOLS: tuple[Tool[Any, Any], ...] = (VECTOR_SEARCH, GET_DOCUMENT, RESOLVE_KIND, RELATED, LIST_FACETS, LIST_CHANGES)


def names() -> tuple[str, ...]:
    """Every tool's name (what the controller's metrics label), from the table as it is now."""
    return tuple(tool.name for tool in TOOLS)


def by_name(name: str) -> Tool[Any, Any]:
    for tool in TOOLS:
        if tool.name == name:
            return tool
    raise SearchError(f"Unknown tool {name!r}; use one of {', '.join(names())}")


def build(model: type[Any], fields: Mapping[str, Any]) -> Any:
    """``fields`` validated into ``model``; every problem in one :class:`SearchError` line."""
    try:
        return model(**fields)
    except ValidationError as exc:
        raise SearchError(describe(exc)) from None
