"""What one caller may read, and the clusters it may read shared records of.

Every tool call goes through a :class:`ScopedSearch`, so it is also where calls are observed: the
controller gives the service its metrics as ``observer`` and each call is timed, counted and traced
there, with no subclass of the service repeating its methods.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from kubevec.inference.documents import CAPABILITIES
from kubevec.inference.fleet import within

P = ParamSpec("P")
T = TypeVar("T")

if TYPE_CHECKING:
    from kubevec.query.access import View
    from kubevec.query.answers import Answer, Result
    from kubevec.query.changes import Changes, ChangesRequest
    from kubevec.query.related import Direction, Related
    from kubevec.query.request import SearchRequest
    from kubevec.query.search import SearchService


def scope_clusters(view: View | None, collection: str) -> frozenset[str] | None:
    """The clusters a caller is limited to, where records can be shared by clusters (capabilities); else None."""
    return view.clusters if view is not None and collection == CAPABILITIES else None


def within_clusters(metadata: Mapping[str, Any], clusters: frozenset[str] | None) -> dict[str, Any] | None:
    """``metadata`` as a caller limited to ``clusters`` sees it (None: not at all); every cluster: as stored."""
    return dict(metadata) if clusters is None else within(metadata, clusters=clusters)


class ToolObserver(Protocol):
    """Told of each tool call (the controller's metrics and traces): around it, and when it answered degraded."""

    def tool_call(self, tool: str) -> contextlib.AbstractContextManager[None]: ...

    def answered_degraded(self, tool: str) -> None: ...


def _tool(
    name: str,
) -> Callable[
    [Callable[Concatenate[ScopedSearch, P], Coroutine[Any, Any, T]]],
    Callable[Concatenate[ScopedSearch, P], Coroutine[Any, Any, T]],
]:
    """The MCP tool a method serves: its calls are told to the service's observer, if it has one."""

    def wrap(
        method: Callable[Concatenate[ScopedSearch, P], Coroutine[Any, Any, T]],
    ) -> Callable[Concatenate[ScopedSearch, P], Coroutine[Any, Any, T]]:
        @functools.wraps(method)
        async def observed(self: ScopedSearch, /, *args: P.args, **kwargs: P.kwargs) -> T:
            observer = self.service.observer
            if observer is None:
                return await method(self, *args, **kwargs)
            with observer.tool_call(name):
                answer = await method(self, *args, **kwargs)
            if getattr(answer, "degraded", None):
                observer.answered_degraded(name)
            return answer

        return observed

    return wrap


@dataclasses.dataclass(frozen=True)
class ScopedSearch:
    """What one caller may read, and only that: the view is bound here once, not passed by each tool.

    The MCP tools are given a way to make these for the caller of each call and never the service
    itself, so a new tool cannot forget the view: without it there is nothing to read.
    """

    service: SearchService = dataclasses.field(repr=False)
    view: View | None

    @_tool("vector_search")
    async def search(self, request: SearchRequest) -> Answer:
        return await self.service.search(request, view=self.view)

    @_tool("get_document")
    async def find_document(
        self, id: str, *, collection: str | None = None, cluster: str | None = None
    ) -> tuple[Result, str] | None:
        return await self.service.find_document(id, collection=collection, cluster=cluster, view=self.view)

    @_tool("resolve_kind")
    async def resolve_kind(self, name: str, *, limit: int = 5, cluster: str | None = None) -> list[dict[str, Any]]:
        return await self.service.resolve_kind(name, limit=limit, cluster=cluster, view=self.view)

    @_tool("list_changes")
    async def changes(self, request: ChangesRequest) -> Changes:
        return await self.service.changes(request, view=self.view)

    @_tool("related")
    async def related(
        self, subject: str, *, hops: int = 1, direction: Direction = "both", cluster: str | None = None
    ) -> Related:
        return await self.service.related(subject, hops=hops, direction=direction, cluster=cluster, view=self.view)

    @_tool("list_facets")
    async def facets(
        self, collection: str, field: str, *, limit: int = 100, cluster: str | None = None
    ) -> dict[str, int]:
        return await self.service.facets(collection, field, limit=limit, cluster=cluster, view=self.view)
