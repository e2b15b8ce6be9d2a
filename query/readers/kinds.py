"""``resolve_kind``'s reader: what an agent needs to write a manifest for a kind it only knows by name."""

from __future__ import annotations

from typing import Any

from kubevec.backends.filters import Eq, Filter
from kubevec.core.errors import SearchError
from kubevec.inference.documents import CAPABILITIES
from kubevec.query.kinds import exact_kinds, kind_answers
from kubevec.query.readers.search import read_search
from kubevec.query.request import SearchRequest, check_cluster
from kubevec.query.scope import admit
from kubevec.query.sources import Sources
from kubevec.query.views import View


async def resolve_kind(
    sources: Sources, name: str, view: View | None, *, limit: int = 5, cluster: str | None = None
) -> list[dict[str, Any]]:
    """Exact first: the kind, plural, short name, ``plural.group`` or ``Kind.group``, case-insensitive,
    over the capabilities collection (one document per resource type, so a scan is cheap); every
    exact match is returned (``Certificate`` can exist in several groups). Without one, the
    closest types by meaning (``match: semantic`` with their similarity).
    """
    check_cluster(cluster)
    wanted = name.strip().lower()
    if not wanted:
        await sources.active.fresh()
        raise SearchError("resolve_kind needs a kind, a plural, a short name or a phrase")
    collection = await sources.name(CAPABILITIES)
    scope: Filter | None = Eq("cluster", cluster) if cluster else None
    admitted = admit(view, CAPABILITIES, cluster=cluster, conditions=scope)
    if admitted is None:
        return []
    records = sources.store.iter_records(collection, filter=admitted.filter, page_size=1000)
    exact = await exact_kinds(records, wanted=wanted, clusters=admitted.clusters, cluster=cluster)
    if exact:
        return exact[:limit]
    if sources.active.embedder is None:
        return []
    request = SearchRequest.build(collection=CAPABILITIES, query=name, k=limit, hybrid=False, cluster=cluster)
    results = await read_search(sources, request, view, keep_parts=True)  # one answer per cluster's part
    semantic = [
        answer
        for r in results
        for answer in kind_answers(r.id, r.metadata, cluster=cluster, match="semantic", similarity=r.similarity)
    ]
    return semantic[:limit]
