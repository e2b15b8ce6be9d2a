"""What goes into a store and what comes out of it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import NamedTuple

from kubevec.core.types import MetadataValue as MetadataValue
from kubevec.core.types import Scalar as Scalar

#: Payload keys the backends use for themselves (Qdrant keeps id and text in the payload, Chroma
#: keeps the text's words in ``_words``).
RESERVED_METADATA = frozenset({"id", "text", "_words"})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Record:
    """One stored document: id, embedding, text, and filterable metadata (with ``content_hash``)."""

    id: str
    vector: list[float]
    text: str
    metadata: Mapping[str, MetadataValue]


class StoredHashes(NamedTuple):
    """Both hashes of one stored record: enough to plan a write without reading the record itself.

    ``built_from`` says which version of which source object the document was built from (see
    ``kubevec.inference.documents.BUILT_FROM``), so an unchanged object need not be built again to know.
    ``cluster`` says which controller wrote it: several may share a store, and each collects only
    its own documents.
    """

    content_hash: str
    text_hash: str  # "" for a record stored before text hashes were kept
    built_from: str = ""
    cluster: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Hit:
    """One search result. ``score`` is a similarity in [0, 1], higher is closer."""

    id: str
    score: float
    text: str
    metadata: Mapping[str, MetadataValue]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Health:
    ok: bool
    backend: str
    detail: str


def cosine_distance_to_score(distance: float) -> float:
    """Chroma reports cosine *distance* d = 1 - cos; the score is cos clipped to [0, 1]."""
    return min(1.0, max(0.0, 1.0 - distance))


def similarity_to_score(similarity: float) -> float:
    """Qdrant and the memory store report cosine similarity in [-1, 1]; clip to [0, 1]."""
    return min(1.0, max(0.0, similarity))
