"""Capability documents shared by several clusters: one per distinct type description.

A controller builds its own capability document per resource type: id ``plural.group``, its
cluster, the versions its API server serves. Several clusters may write one store; if each wrote
that document as it built it, two clusters with different versions of one operator would take
turns rewriting (and, where the texts differ, re-embedding) it on every resync, and a search would
answer with whichever wrote last.

So the store holds one record per *distinct text* of a type, id ``plural.group@<12 hex of the text
hash>``, and each cluster that serves it is a *part* of it: its name, apiVersion, storage and
served versions, and the content hash of the document it built (what tells its controller, from
the stored record alone, that its part is current). A resync of an unchanged cluster finds every
part current and writes nothing; a cluster whose text differs gets a record of its own; a part
moves between records when a cluster's text changes, and a record with no part left goes.

The fields that differ by cluster are lists in the stored payload (``cluster``, ``api_version``,
``version``, ``served_versions``, so filters keep working: ``Eq`` matches a list that contains the
value) with ``served_by`` saying which cluster serves what; :func:`project` turns them back into
one cluster's scalars for an answer about that cluster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping
from typing import Any, Final

from kubevec.core import fields
from kubevec.inference.documents import (
    BUILT_FROM,
    CAPABILITIES,
    HASH_FIELDS,
    Document,
    MetadataValue,
    make_document,
    text_hash,
)

#: Between the resource name and the text hash in a shared record's id (never in a resource name).
SEPARATOR: Final = "@"
TEXT_HASH_CHARS: Final = 12
#: The payload fields whose value depends on the cluster serving the type.
PER_CLUSTER: Final = ("cluster", "api_version", "version", "served_versions")
PARTS: Final = fields.PARTS.name
SERVED_BY: Final = fields.SERVED_BY.name
#: Left out when a stored record's payload is the base of a new one.
_DERIVED: Final = frozenset({*PER_CLUSTER, PARTS, SERVED_BY, BUILT_FROM, *HASH_FIELDS, "schema_version"})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Part:
    """One cluster's share of a capability record."""

    cluster: str
    api_version: str
    version: str
    served_versions: tuple[str, ...]
    content_hash: str  # of the document the cluster's controller built: its part is current when equal
    built_from: str = ""

    def encode(self) -> str:
        served = ",".join(self.served_versions) or "-"
        return " ".join(
            [self.cluster, self.api_version, self.version, served, self.content_hash, self.built_from or "-"]
        )

    @classmethod
    def decode(cls, value: str) -> Part | None:
        fields = value.split(" ")
        if len(fields) != 6:
            return None
        cluster, api_version, version, served, content, built_from = fields
        return cls(
            cluster=cluster,
            api_version=api_version,
            version=version,
            served_versions=tuple(v for v in served.split(",") if v and v != "-"),
            content_hash=content,
            built_from="" if built_from == "-" else built_from,
        )

    @property
    def served_by(self) -> str:
        return f"{self.cluster}={self.api_version} ({', '.join(self.served_versions)})"


def shared_id(resource: str, text_hash: str) -> str:
    """The record id of one text of one type: ``plural.group@<text hash>``."""
    return f"{resource}{SEPARATOR}{text_hash[:TEXT_HASH_CHARS]}"


def is_shared(record_id: str) -> bool:
    """A shared record, not one written before capability records were shared (id ``plural.group``)."""
    return SEPARATOR in record_id


def resource_of(record_id: str) -> str:
    """``plural.group`` of a capability record id, shared or not."""
    return record_id.split(SEPARATOR, 1)[0]


def part_of(document: Document) -> Part:
    """The part a cluster's own capability document makes."""
    metadata = document.metadata
    return Part(
        cluster=_scalar(fields.CLUSTER.raw(metadata)),
        api_version=_scalar(fields.API_VERSION.raw(metadata)),
        version=_scalar(fields.VERSION.raw(metadata)),
        served_versions=tuple(fields.SERVED_VERSIONS.of(metadata)),
        content_hash=document.content_hash,
        built_from=document.built_from,
    )


def parts_of(metadata: Mapping[str, Any]) -> list[Part]:
    """The parts of a stored shared record (none for a record from before sharing, or a damaged field)."""
    value = fields.PARTS.raw(metadata)
    if not isinstance(value, list):
        return []
    return [part for part in (Part.decode(str(item)) for item in value) if part is not None]


def share(*, resource: str, text: str, base: Mapping[str, Any], parts: Iterable[Part]) -> Document:
    """The shared record of ``text`` with ``parts``; ``base`` gives the fields every cluster shares.

    ``base`` is a cluster's own document's payload, or a stored record's (when a part leaves it).
    Parts are kept one per cluster, sorted, so the record's hash depends on what it says alone.
    """
    by_cluster = {part.cluster: part for part in parts}
    ordered = [by_cluster[c] for c in sorted(by_cluster)]
    if not ordered:
        raise ValueError(f"a shared capability record of {resource} needs at least one part")
    metadata: dict[str, MetadataValue] = {k: v for k, v in base.items() if k not in _DERIVED}
    metadata["resource"] = resource
    metadata["cluster"] = [p.cluster for p in ordered]
    metadata["api_version"] = sorted({p.api_version for p in ordered})
    metadata["version"] = sorted({p.version for p in ordered})
    metadata["served_versions"] = sorted({v for p in ordered for v in p.served_versions})
    metadata[SERVED_BY] = [p.served_by for p in ordered]
    return make_document(
        id=shared_id(resource, text_hash(text)),
        collection=CAPABILITIES,
        text=text,
        metadata=metadata,
        bookkeeping={PARTS: [p.encode() for p in ordered]},
    )


def project(metadata: Mapping[str, Any], *, cluster: str | None = None) -> dict[str, Any]:
    """A shared record's payload as one cluster sees it: that cluster's scalars, the bookkeeping left out.

    Without ``cluster``, a record one cluster serves reads as that cluster's; one several serve keeps
    its lists and ``served_by``. A record from before sharing is returned as it is.
    """
    parts = parts_of(metadata)
    out = {k: v for k, v in metadata.items() if k != PARTS}
    if not parts:
        return out
    chosen = next((p for p in parts if p.cluster == cluster), None) if cluster else None
    if chosen is None and len(parts) == 1 and cluster is None:
        chosen = parts[0]
    if chosen is None:
        return out
    out.update(
        cluster=chosen.cluster,
        api_version=chosen.api_version,
        version=chosen.version,
        served_versions=list(chosen.served_versions),
    )
    if chosen.built_from:
        out[BUILT_FROM] = chosen.built_from
    out.pop(SERVED_BY, None)
    return out


def within(metadata: Mapping[str, Any], *, clusters: Container[str]) -> dict[str, Any] | None:
    """A record's payload with only the parts of ``clusters`` (a caller's scope), None when none is left.

    A shared record names every cluster serving its text; a caller limited to some clusters sees
    the record as if only those had written it: their parts, and the lists and ``served_by`` made
    from those alone. A record from before sharing is one cluster's: kept whole or not at all.
    """
    parts = parts_of(metadata)
    if not parts:
        value = fields.CLUSTER.raw(metadata)
        return (
            dict(metadata) if any(str(c) in clusters for c in (value if isinstance(value, list) else [value])) else None
        )
    kept = [part for part in parts if part.cluster in clusters]
    if not kept:
        return None
    out = dict(metadata)
    out["cluster"] = [p.cluster for p in kept]
    out["api_version"] = sorted({p.api_version for p in kept})
    out["version"] = sorted({p.version for p in kept})
    out["served_versions"] = sorted({v for p in kept for v in p.served_versions})
    out[SERVED_BY] = [p.served_by for p in kept]
    out[PARTS] = [p.encode() for p in kept]
    return out


def _scalar(value: object) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return "" if value is None else str(value)
