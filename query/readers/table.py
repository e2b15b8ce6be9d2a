"""Each tool's reader as the tool table calls it: the caller's sources, its declared request, its view.

The readers themselves take plain arguments (``documents.find_document(sources, id, view, ...)``);
these unpack the request for them. Imported only when a tool is first read (``kubevec.query.tools.lazy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubevec.query.readers.documents import find_document
from kubevec.query.readers.facets import facets as count_values
from kubevec.query.readers.kinds import resolve_kind
from kubevec.query.readers.related import related as walk
from kubevec.query.readers.search import read_search

if TYPE_CHECKING:
    from kubevec.query.answers import Answer, Result
    from kubevec.query.related import Related
    from kubevec.query.request import SearchRequest
    from kubevec.query.sources import Sources
    from kubevec.query.tool_requests import DocumentRequest, FacetsRequest, KindRequest, RelatedRequest
    from kubevec.query.views import View


async def search(sources: Sources, request: SearchRequest, view: View | None) -> Answer:
    return await read_search(sources, request, view)


async def document(sources: Sources, request: DocumentRequest, view: View | None) -> tuple[Result, str] | None:
    return await find_document(sources, request.id, view, collection=request.collection, cluster=request.cluster)


async def kinds(sources: Sources, request: KindRequest, view: View | None) -> list[dict[str, Any]]:
    return await resolve_kind(sources, request.name, view, limit=request.limit, cluster=request.cluster)


async def related(sources: Sources, request: RelatedRequest, view: View | None) -> Related:
    return await walk(
        sources, request.id, view, hops=request.hops, direction=request.direction, cluster=request.cluster
    )


async def facets(sources: Sources, request: FacetsRequest, view: View | None) -> dict[str, int]:
    return await count_values(
        sources, request.collection, request.field, view, limit=request.limit, cluster=request.cluster
    )
