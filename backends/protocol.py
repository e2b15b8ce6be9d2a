"""What callers of a store hold: the :class:`VectorStore` protocol and the values it speaks in.

Apart from the template (base.py) so that a caller that only names the protocol (the generation
switch, the factory, the query side's types) imports neither asyncio's executor machinery nor a
backend; every backend provides exactly this, through :class:`~kubevec.backends.base.BaseStore`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from typing import Final, Literal, Protocol

from kubevec.backends.filters import Filter
from kubevec.backends.journal import Entry
from kubevec.backends.records import Health, Hit, Record, StoredHashes

Distance = Literal["cosine"]
#: Where a page ends: a backend's own token (an offset, the last id returned).
Cursor = str | int

DEFAULT_PAGE_SIZE: Final = 1000


@dataclasses.dataclass(frozen=True, kw_only=True)
class CollectionInfo:
    dimension: int
    distance: str
    embedder: str


class StoreObserver(Protocol):
    """Told of every public store operation as it ends: how long it took and whether it failed."""

    def observed(self, *, backend: str, operation: str, seconds: float, failed: bool) -> None: ...


class VectorStore(Protocol):
    """What the controller and the query side use; every backend provides exactly this."""

    #: Told of every operation (the controller's metrics); None: nobody is.
    observer: StoreObserver | None

    @property
    def backend(self) -> str: ...

    @property
    def location(self) -> str: ...

    async def ensure_collection(
        self,
        name: str,
        *,
        dimension: int,
        distance: Distance = "cosine",
        embedder: str,
        indexed: Sequence[str] = (),
    ) -> None: ...

    async def drop_collection(self, name: str) -> None: ...

    async def collection_info(self, name: str) -> CollectionInfo | None: ...

    async def upsert(self, name: str, records: Sequence[Record]) -> None: ...

    async def delete(self, name: str, ids: Sequence[str]) -> None: ...

    async def delete_where(self, name: str, filter: Filter) -> None: ...

    async def get(self, name: str, ids: Sequence[str], *, include_vectors: bool = False) -> list[Record]: ...

    async def count(self, name: str, filter: Filter | None = None) -> int: ...

    async def sample(self, name: str, *, limit: int) -> list[Record]: ...

    async def list_ids(self, name: str) -> list[str]: ...

    async def stamp(self, name: str) -> str | None: ...

    async def journal(self, name: str, *, since: float) -> list[Entry] | None: ...

    def iter_ids(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[tuple[str, str]]: ...

    def iter_hashes(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[tuple[str, StoredHashes]]: ...

    def iter_records(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[Record]: ...

    def iter_texts(self, name: str, *, page_size: int = DEFAULT_PAGE_SIZE) -> AsyncIterator[tuple[str, str]]: ...

    async def search(
        self,
        name: str,
        *,
        vector: Sequence[float],
        k: int,
        filter: Filter | None = None,
        text_contains: str | None = None,
    ) -> list[Hit]: ...

    async def keyword_search(self, name: str, *, text: str, filter: Filter | None = None, k: int) -> list[Hit]: ...

    async def health(self) -> Health: ...

    async def close(self) -> None: ...
