"""Collection generations: which physical collections readers and the controller use, switched atomically.

Changing the embedding model makes every stored vector useless. A migration builds the collections
of the next *generation* (``instances__g2``) beside the live ones, then points readers at them by
rewriting one pointer record (one upsert: atomic in every backend), then drops the old ones. Until
the switch, readers keep using the old generation, complete and with its own model; after it, the
new one, complete. Generation 0 is the plain name, so stores that never migrated need no pointer.

The pointer lives in its own small collection (dimension 1, like the controller's status record)
and says which embedder built the generation, so a reader can embed queries with the right model.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubevec.backends.protocol import VectorStore
from kubevec.backends.records import Record

POINTER_COLLECTION: Final = "generations"
POINTER_ID: Final = "active"
POINTER_EMBEDDER: Final = "none"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Generation:
    number: int
    embedder: str
    dimension: int
    provider: str | None = None
    model: str | None = None

    def physical(self, base: str) -> str:
        """The collection that holds ``base`` (``instances``, or ``kv_instances`` with a prefix) in this generation."""
        return base if self.number == 0 else f"{base}__g{self.number}"

    def metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {"generation": self.number, "embedder": self.embedder, "dimension": self.dimension}
        if self.provider:
            out["provider"] = self.provider
        if self.model:
            out["model"] = self.model
        return out

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Generation:
        return cls(
            number=int(metadata["generation"]),
            embedder=str(metadata["embedder"]),
            dimension=int(metadata["dimension"]),
            provider=str(metadata["provider"]) if metadata.get("provider") else None,
            model=str(metadata["model"]) if metadata.get("model") else None,
        )


async def read_active(store: VectorStore, *, pointer: str) -> Generation | None:
    """The active generation, or None when the store never migrated (generation 0, plain names)."""
    if await store.collection_info(pointer) is None:
        return None
    records = await store.get(pointer, [POINTER_ID])
    return Generation.from_metadata(records[0].metadata) if records else None


async def write_active(store: VectorStore, *, pointer: str, generation: Generation) -> None:
    """Point readers at ``generation``: one record, written in one upsert."""
    await store.ensure_collection(pointer, dimension=1, embedder=POINTER_EMBEDDER)
    metadata = {**generation.metadata(), "switched_at": int(time.time())}
    metadata["content_hash"] = f"generation-{generation.number}"
    text = f"active generation {generation.number} ({generation.embedder})"
    await store.upsert(pointer, [Record(id=POINTER_ID, vector=[1.0], text=text, metadata=metadata)])


async def resolve(
    store: VectorStore, *, pointer: str, bases: Mapping[str, str]
) -> tuple[dict[str, str], Generation | None]:
    """Physical collection names for logical ones (``{"instances": "kv_instances"}`` -> ``kv_instances__g2``)."""
    generation = await read_active(store, pointer=pointer)
    if generation is None:
        return dict(bases), None
    return {logical: generation.physical(base) for logical, base in bases.items()}, generation


async def current_generation(store: VectorStore, *, pointer: str, bases: Sequence[str]) -> Generation | None:
    """The active generation; for a store that never migrated, generation 0 as its collections say."""
    active = await read_active(store, pointer=pointer)
    if active is not None:
        return active
    for base in bases:
        info = await store.collection_info(base)
        if info is not None:
            return Generation(number=0, embedder=info.embedder, dimension=info.dimension)
    return None
