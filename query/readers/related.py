"""``related``'s reader: what an instance references and what references it (see ``kubevec.query.related``)."""

from __future__ import annotations

from kubevec.core.errors import InvalidFilter, SearchError
from kubevec.inference.documents import INSTANCES
from kubevec.query.related import Direction, Related, Relationships
from kubevec.query.request import check_cluster
from kubevec.query.sources import Sources
from kubevec.query.views import View


async def related(
    sources: Sources,
    subject: str,
    view: View | None,
    *,
    hops: int = 1,
    direction: Direction = "both",
    cluster: str | None = None,
) -> Related:
    """With ``view``, documents the caller may not see are neither edges nor ends: such an object is
    only named where a visible document references it (as its own spec does)."""
    check_cluster(cluster)
    relationships = Relationships(store=sources.store, collection=await sources.name(INSTANCES), view=view)
    try:
        return await relationships.related(subject, hops=hops, direction=direction, cluster=cluster)
    except InvalidFilter as exc:
        raise SearchError(str(exc)) from exc
