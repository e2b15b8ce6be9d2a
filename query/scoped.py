"""What one caller may read, and only that: the reader every tool call goes through.

A :class:`ScopedSearch` binds the caller's view once; each tool of the table (``kubevec.query.tools``)
is read through :meth:`ScopedSearch.read`, which hands the view to the tool's reader (where the one
view gate, ``kubevec.query.scope.admit``, applies it). It is also where calls are observed: the
controller gives the service its metrics as ``observer`` and each call is timed, counted and traced
here, for every tool alike.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kubevec.query import tools

if TYPE_CHECKING:
    from kubevec.query.answers import Answer, Result
    from kubevec.query.audit import AuditTrail
    from kubevec.query.changes import Changes, ChangesRequest
    from kubevec.query.related import Direction, Related
    from kubevec.query.request import SearchRequest
    from kubevec.query.sources import Sources
    from kubevec.query.views import View

R = TypeVar("R")
A = TypeVar("A")


class ToolObserver(Protocol):
    """Told of each tool call (the controller's metrics and traces): around it, and when it answered degraded."""

    def tool_call(self, tool: str) -> contextlib.AbstractContextManager[None]: ...

    def answered_degraded(self, tool: str) -> None: ...


@dataclasses.dataclass(frozen=True)
class ScopedSearch:
    """What one caller may read, and only that: the view is bound here once, not passed by each tool.

    The MCP tools are given a way to make these for the caller of each call and never the service
    itself, so a new tool cannot forget the view: without it there is nothing to read.
    """

    sources: Sources = dataclasses.field(repr=False)
    view: View | None
    observer: ToolObserver | None = dataclasses.field(default=None, repr=False)
    audit: AuditTrail | None = dataclasses.field(default=None, repr=False)

    async def read(self, tool: tools.Tool[R, A], request: R) -> A:
        """``tool``'s answer to ``request`` as this caller sees it, told to the observer and the audit trail."""
        observed = self.observer.tool_call(tool.name) if self.observer is not None else contextlib.nullcontext()
        with observed:  # the trail's record is an event of the call's span
            started = time.monotonic()
            try:
                answer = await tool.read(self.sources, request, self.view)
            except Exception as exc:
                self._audit(tool.name, request, None, started, exc)
                raise
            self._audit(tool.name, request, answer, started, None)
        if self.observer is not None and getattr(answer, "degraded", None):
            self.observer.answered_degraded(tool.name)
        return answer

    def _audit(self, tool: str, request: object, answer: object, started: float, error: BaseException | None) -> None:
        if self.audit is not None:
            seconds = time.monotonic() - started
            self.audit.called(tool=tool, view=self.view, request=request, answer=answer, seconds=seconds, error=error)

    async def call(self, name: str, **fields: Any) -> Any:
        """The tool of the table named ``name``, its request built from ``fields`` (one error line if invalid)."""
        tool = tools.by_name(name)
        return await self.read(tool, tools.build(tool.request, fields))

    # -- the tools, typed, for the servers that present their answers -------------------------------

    async def search(self, request: SearchRequest) -> Answer:
        return await self.read(tools.VECTOR_SEARCH, request)

    async def find_document(
        self, id: str, *, collection: str | None = None, cluster: str | None = None
    ) -> tuple[Result, str] | None:
        request = tools.DocumentRequest.model_construct(id=id, collection=collection, cluster=cluster)
        return await self.read(tools.GET_DOCUMENT, request)

    async def resolve_kind(self, name: str, *, limit: int = 5, cluster: str | None = None) -> list[dict[str, Any]]:
        return await self.read(
            tools.RESOLVE_KIND, tools.KindRequest.model_construct(name=name, limit=limit, cluster=cluster)
        )

    async def changes(self, request: ChangesRequest) -> Changes:
        return await self.read(tools.LIST_CHANGES, request)

    async def related(
        self, subject: str, *, hops: int = 1, direction: Direction = "both", cluster: str | None = None
    ) -> Related:
        request = tools.RelatedRequest.model_construct(id=subject, hops=hops, direction=direction, cluster=cluster)
        return await self.read(tools.RELATED, request)

    async def facets(
        self, collection: str, field: str, *, limit: int = 100, cluster: str | None = None
    ) -> dict[str, int]:
        request = tools.FacetsRequest.model_construct(collection=collection, field=field, limit=limit, cluster=cluster)
        return await self.read(tools.LIST_FACETS, request)
