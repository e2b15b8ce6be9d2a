"""``resolve_kind``'s answers: a resource type's API as an agent writing a manifest needs it, per cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from kubevec.backends import Record
from kubevec.core import fields
from kubevec.inference.fleet import parts_of, project
from kubevec.inference.identity import plural_of
from kubevec.query.scope import within_clusters


async def exact_kinds(
    records: AsyncIterator[Record], *, wanted: str, clusters: frozenset[str] | None, cluster: str | None
) -> list[dict[str, Any]]:
    """Every type whose kind, plural, short name, ``plural.group`` or ``Kind.group`` is ``wanted``
    (lower case), core groups first: ``Certificate`` can exist in several groups."""
    exact = []
    async for record in records:
        metadata = within_clusters(record.metadata, clusters)
        if metadata is None:
            continue
        resource = str(fields.RESOURCE.raw(metadata, record.id))
        kind, group = fields.KIND.of(metadata), fields.GROUP.of(metadata)
        names = {
            kind.lower(),
            resource.lower(),
            plural_of(resource).lower(),
            f"{kind}.{group}".lower(),
            *(name.lower() for name in fields.SHORT_NAMES.of(metadata)),
        }
        if wanted in names:
            exact += kind_answers(record.id, metadata, cluster=cluster, match="exact", similarity=None)
    return sorted(exact, key=lambda a: (a["group"] not in ("", "core"), a["group"], a["kind"], str(a["cluster"] or "")))


def kind_answers(
    id: str, metadata: Mapping[str, Any], *, cluster: str | None, match: str, similarity: float | None
) -> list[dict[str, Any]]:
    """One answer per cluster serving the type (only ``cluster``'s when asked), each with that cluster's
    apiVersion: one cluster may serve a version another does not."""
    clusters = [p.cluster for p in parts_of(metadata)]
    if not clusters:  # a record from before sharing: one cluster's, as it is
        return [kind_answer(id, metadata, match=match, similarity=similarity)]
    return [
        kind_answer(id, project(metadata, cluster=c), match=match, similarity=similarity)
        for c in clusters
        if cluster is None or c == cluster
    ]


def kind_answer(id: str, metadata: Mapping[str, Any], *, match: str, similarity: float | None) -> dict[str, Any]:
    resource = str(fields.RESOURCE.raw(metadata, id))
    top = fields.FIELDS.raw(metadata, [])
    answer = {
        "kind": fields.KIND.raw(metadata),
        "group": fields.GROUP.raw(metadata, ""),
        "apiVersion": fields.API_VERSION.raw(metadata),
        "resource": plural_of(resource),
        "scope": fields.SCOPE.raw(metadata),
        "servedVersions": fields.SERVED_VERSIONS.raw(metadata, []),
        "storageVersion": fields.VERSION.raw(metadata),
        "shortNames": fields.SHORT_NAMES.raw(metadata, []),
        "topFields": list(top[:8]) if isinstance(top, list) else [],
        "cluster": fields.CLUSTER.raw(metadata),
        "id": id,
        "match": match,
    }
    if similarity is not None:
        answer["similarity"] = round(similarity, 4)
    return answer
