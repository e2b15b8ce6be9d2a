"""The reference backend: exact cosine search over a dict, used by unit tests and as the semantics oracle."""

from __future__ import annotations

import bisect

import numpy as np

from kubevec.backends.base import BaseStore
from kubevec.backends.filters import Filter, matches
from kubevec.backends.protocol import CollectionInfo, Cursor
from kubevec.backends.records import Hit, Record, similarity_to_score
from kubevec.core.errors import BackendUnavailable, CollectionNotFound


class MemoryStore(BaseStore):
    """Everything in process memory; nothing survives the process. Exact, deterministic search."""

    max_batch = 10_000

    def __init__(self) -> None:
        super().__init__(backend="memory", location="memory")
        self._collections: dict[str, tuple[CollectionInfo, dict[str, Record]]] = {}
        #: Set by tests to simulate an outage: every call raises ConnectionError.
        self.unavailable = False

    def _translate_error(self, exc: Exception) -> Exception:
        if isinstance(exc, ConnectionError):
            return BackendUnavailable(f"memory store is unavailable: {exc}")
        return super()._translate_error(exc)

    def _records(self, name: str) -> dict[str, Record]:
        self._check_up()
        found = self._collections.get(name)
        if found is None:
            raise CollectionNotFound(f"Collection {name!r} does not exist in memory")
        return found[1]

    def _check_up(self) -> None:
        if self.unavailable:
            raise ConnectionError("simulated outage")

    def _describe(self, name: str) -> CollectionInfo | None:
        self._check_up()
        entry = self._collections.get(name)
        return entry[0] if entry else None

    def _create(self, name: str, info: CollectionInfo) -> None:
        self._check_up()
        self._collections[name] = (info, {})

    def _drop(self, name: str) -> None:
        self._check_up()
        self._collections.pop(name, None)

    def _upsert(self, name: str, records: list[Record]) -> None:
        store = self._records(name)
        for record in records:
            store[record.id] = Record(
                id=record.id, vector=list(record.vector), text=record.text, metadata=dict(record.metadata)
            )

    def _delete(self, name: str, ids: list[str]) -> None:
        store = self._records(name)
        for record_id in ids:
            store.pop(record_id, None)

    def _delete_where(self, name: str, filter: Filter) -> None:
        store = self._records(name)
        for record_id in [r.id for r in store.values() if matches(filter, text=r.text, metadata=r.metadata)]:
            del store[record_id]

    def _get(self, name: str, ids: list[str], include_vectors: bool) -> list[Record]:
        store = self._records(name)
        return [_strip(store[i], with_vector=include_vectors, with_text=True) for i in ids if i in store]

    def _count(self, name: str, filter: Filter | None) -> int:
        store = self._records(name)
        if filter is None:
            return len(store)
        return sum(1 for r in store.values() if matches(filter, text=r.text, metadata=r.metadata))

    def _page(
        self, name: str, filter: Filter | None, cursor: Cursor | None, limit: int, with_text: bool
    ) -> tuple[list[Record], Cursor | None]:
        store = self._records(name)
        ordered = sorted(store)
        start = 0 if cursor is None else bisect.bisect_right(ordered, str(cursor))
        page: list[Record] = []
        for index in range(start, len(ordered)):
            record = store[ordered[index]]
            if filter is None or matches(filter, text=record.text, metadata=record.metadata):
                page.append(_strip(record, with_vector=False, with_text=with_text))
                if len(page) == limit:
                    more = index + 1 < len(ordered)
                    return page, (record.id if more else None)
        return page, None

    def _ids(self, name: str, filter: Filter | None) -> list[str]:
        return [
            r.id
            for r in self._records(name).values()
            if filter is None or matches(filter, text=r.text, metadata=r.metadata)
        ]

    def _search(self, name: str, vector: list[float], k: int, filter: Filter | None) -> list[Hit]:
        pool = [
            r
            for r in self._records(name).values()
            if filter is None or matches(filter, text=r.text, metadata=r.metadata)
        ]
        if not pool:
            return []
        matrix = np.asarray([r.vector for r in pool], dtype=np.float64)
        query = np.asarray(vector, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
        cosines = matrix @ query / np.where(norms == 0, 1.0, norms)
        hits = [
            Hit(id=r.id, score=similarity_to_score(float(c)), text=r.text, metadata=r.metadata)
            for r, c in zip(pool, cosines, strict=True)
        ]
        hits.sort(key=lambda hit: (-hit.score, hit.id))
        return hits[:k]

    def _health(self) -> str:
        self._check_up()
        return f"{len(self._collections)} collections in memory"


def _strip(record: Record, *, with_vector: bool, with_text: bool) -> Record:
    return Record(
        id=record.id,
        vector=list(record.vector) if with_vector else [],
        text=record.text if with_text else "",
        metadata=dict(record.metadata),
    )
