"""Reading a whole collection, whoever reads it: the controller's write side and the readers alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from kubevec.backends.records import Record
from kubevec.core.errors import CollectionNotFound

if TYPE_CHECKING:
    from kubevec.backends.protocol import VectorStore


async def records_of(store: VectorStore, collection: str) -> AsyncIterator[Record]:
    """Every record of a collection; none if it does not exist (a store `kubevec index crds` wrote)."""
    try:
        async for record in store.iter_records(collection, page_size=1000):
            yield record
    except CollectionNotFound:
        return
