"""BM25 over the stored documents (bm25s), kept in step with the store.

The corpus of a record is its text plus the fields and description kept in its metadata, so
exact words an embedding blurs ("PgBouncer", "SQS", "cosign") still find their resource. The
index is rebuilt when the store's fingerprint (a hash of every id and content hash) changes,
checked at most every ``refresh_seconds``. Only the first query of a collection waits for a
build; later checks run in the background while queries use the index they have (reading
20k records takes about a second, which no agent's query should pay every 30 s).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from collections.abc import Sequence
from typing import Any

import bm25s

from backends import BackendError, Record, VectorStore

logger = logging.getLogger(__name__)
# bm25s sets its own logger to DEBUG on import ("Building index from IDs objects" on every build).
logging.getLogger("bm25s").setLevel(logging.WARNING)


@dataclasses.dataclass
class _Index:
    ids: list[str]
    records: list[Record]
    retriever: Any
    fingerprint: str


def corpus_text(record: Record) -> str:
    parts = [record.text]
    for key in ("description", "fields", "capabilities", "short_names"):
        value = record.metadata.get(key)
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        elif isinstance(value, str):
            parts.append(value)
    return " ".join(parts)


class LexicalIndex:
    """One BM25 index per collection, rebuilt when the collection changes."""

    def __init__(self, *, store: VectorStore, refresh_seconds: float = 30.0) -> None:
        self._store = store
        self._refresh = refresh_seconds
        self._indexes: dict[str, _Index] = {}
        self._checked: dict[str, float] = {}
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        self._lock = asyncio.Lock()

    async def rank(self, collection: str, *, text: str, k: int) -> list[tuple[Record, float]]:
        """Records by BM25 score (positive scores only), best first."""
        index = await self._index(collection)
        if not index.ids:
            return []
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        documents, scores = index.retriever.retrieve(tokens, k=min(k, len(index.ids)), show_progress=False)
        return [
            (index.records[int(position)], float(score))
            for position, score in zip(documents[0], scores[0], strict=True)
            if score > 0
        ]

    async def refresh(self, collection: str) -> None:
        """Bring the index up to date now (waits for a background check already running)."""
        running = self._refreshing.get(collection)
        if running is not None:
            await asyncio.shield(running)
        await self._rebuild(collection)

    async def _index(self, collection: str) -> _Index:
        current = self._indexes.get(collection)
        if current is None:
            return await self._rebuild(collection, only_if_missing=True)
        stale = time.monotonic() - self._checked.get(collection, 0.0) >= self._refresh
        if stale and collection not in self._refreshing:
            task = asyncio.create_task(self._background(collection), name=f"kubevec-lexical-{collection}")
            self._refreshing[collection] = task
        return current

    async def _background(self, collection: str) -> None:
        try:
            await self._rebuild(collection)
        except BackendError as exc:  # keep serving the index we have; the next query tries again
            logger.warning("Lexical index refresh failed collection=%s error=%s", collection, exc)
        except Exception:
            logger.exception("Lexical index refresh crashed collection=%s", collection)
        finally:
            self._refreshing.pop(collection, None)

    async def _rebuild(self, collection: str, *, only_if_missing: bool = False) -> _Index:
        async with self._lock:
            built = self._indexes.get(collection)
            if only_if_missing and built is not None:  # concurrent first queries: one build serves all
                return built
            records = [r async for r in self._store.iter_records(collection, page_size=1000)]
            fingerprint = _fingerprint(records)
            self._checked[collection] = time.monotonic()
            current = self._indexes.get(collection)
            if current is not None and current.fingerprint == fingerprint:
                return current
            index = await asyncio.to_thread(_build, records, fingerprint)
            self._indexes[collection] = index
            return index


def _fingerprint(records: Sequence[Record]) -> str:
    digest = hashlib.sha256()
    for record in sorted(records, key=lambda r: r.id):
        digest.update(f"{record.id}\0{record.metadata.get('content_hash', '')}\n".encode())
    return digest.hexdigest()


def _build(records: list[Record], fingerprint: str) -> _Index:
    retriever = bm25s.BM25()
    if records:
        tokens = bm25s.tokenize([corpus_text(r) for r in records], stopwords="en", show_progress=False)
        retriever.index(tokens, show_progress=False)
    return _Index(ids=[r.id for r in records], records=records, retriever=retriever, fingerprint=fingerprint)
