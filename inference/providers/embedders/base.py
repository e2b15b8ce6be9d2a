"""The embedder protocol every caller (sync engine, query side, benchmarks) relies on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of a fixed ``dimension``.

    ``name`` identifies the model and is recorded with each collection, so that a store built
    with one model is never silently queried with another.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...
