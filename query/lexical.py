"""BM25 over the stored documents (bm25s), kept in step with the store.

The corpus of a record is its text plus the fields and description kept in its metadata, so
exact words an embedding blurs ("PgBouncer", "SQS", "cosign") still find their resource; a
collection whose metadata holds no words of its own (instances: ``with_metadata=False``) is
indexed from its texts alone, read without metadata (in Chroma, a third of the time at 12,000
documents), and its ranked records are read back from the store by id.

The index follows the store's write stamps (``kubevec.backends.stamps``): every query first reads
its collection's stamp (one small read) and uses the index built at that stamp, rebuilding it when
a writer wrote since. So a long-lived reader never answers from records the store no longer holds
and ranks by the words the store holds now, exactly as a process of its own would. With
``cache_dir`` the built index is saved there under its stamp (bm25s's own format, ids beside it),
and a later process, or another reader, loads it instead of reading every record again. Past
``exact_max`` documents (20,000) the rebuild runs behind the queries, which meanwhile rank with the
index they have and read the ranked records back from the store (never one it no longer holds).

A store no writer of this version has stamped yet keeps the older checks: the index is rebuilt
when a fingerprint of every id and content hash changes, looked at in the background every
``refresh_seconds``, and a saved index serves when the collection holds the same ids and it is
younger than ``cache_max_age``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any

from kubevec.backends import Record, VectorStore
from kubevec.core import fields
from kubevec.core.errors import BackendError

logger = logging.getLogger(__name__)


@functools.cache
def _bm25s() -> Any:
    """bm25s on first use: its import (~40 MiB with its dependencies) is not paid by a controller
    that serves no queries (``kubevec run`` without the MCP port)."""
    import bm25s

    # bm25s sets its own logger to DEBUG on import ("Building index from IDs objects" on every build).
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


IDS_FILE = "ids.json"
#: Up to this many documents, a collection a writer changed is indexed again before the next query
#: is answered (~1.5 s at 20,000 instance texts in embedded Chroma); larger ones behind the queries (see ``_stamped``).
EXACT_MAX_DOCUMENTS = 20_000


@dataclasses.dataclass
class _Index:
    ids: list[str]
    #: The records in index order, kept in a long-lived process; None for an index loaded from disk.
    records: list[Record] | None
    retriever: Any
    fingerprint: str
    #: The collection's write stamp the index was built at; None for a store that has none.
    stamp: str | None = None


def corpus_text(record: Record) -> str:
    parts = [record.text]
    for field in (fields.DESCRIPTION, fields.FIELDS, fields.CAPABILITY_WORDS, fields.SHORT_NAMES):
        value = field.raw(record.metadata)
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        elif isinstance(value, str):
            parts.append(value)
    return " ".join(parts)


class LexicalIndex:
    """One BM25 index per collection, rebuilt when the collection changes."""

    def __init__(
        self,
        *,
        store: VectorStore,
        refresh_seconds: float = 30.0,
        cache_dir: Path | None = None,
        cache_max_age: float = 600.0,
        exact_max: int = EXACT_MAX_DOCUMENTS,
    ) -> None:
        self._store = store
        self._exact_max = exact_max
        self._refresh = refresh_seconds
        self._cache_dir = cache_dir
        self._cache_max_age = cache_max_age
        self._indexes: dict[str, _Index] = {}
        self._checked: dict[str, float] = {}
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        self._lock = asyncio.Lock()

    async def rank(
        self,
        collection: str,
        *,
        text: str,
        k: int,
        with_metadata: bool = True,
        keep: Callable[[Record], bool] | None = None,
        want: int | None = None,
    ) -> list[tuple[Record, float]]:
        """Records by BM25 score (positive scores only), best first: of the best ``k``, the first ``want``
        that ``keep`` accepts (default: all). An index without records reads them back by id a
        batch of ``want`` at a time, so an unfiltered query reads only what it returns."""
        index = await self._index(collection, with_metadata=with_metadata)
        if not index.ids:
            return []
        tokens = _bm25s().tokenize([text], stopwords="en", show_progress=False)
        documents, scores = index.retriever.retrieve(tokens, k=min(k, len(index.ids)), show_progress=False)
        ranked = [(int(position), float(score)) for position, score in zip(documents[0], scores[0], strict=True)]
        ranked = [(position, score) for position, score in ranked if score > 0]
        if not ranked:
            return []
        want = want or len(ranked)
        out: list[tuple[Record, float]] = []
        if index.records is not None:
            records = index.records
            out = [(records[p], score) for p, score in ranked if keep is None or keep(records[p])]
            return out[:want]
        for start in range(0, len(ranked), want):
            batch = ranked[start : start + want]
            found = {r.id: r for r in await self._store.get(collection, [index.ids[p] for p, _ in batch])}
            for position, score in batch:
                record = found.get(index.ids[position])  # None: deleted since the build
                if record is not None and (keep is None or keep(record)):
                    out.append((record, score))
            if len(out) >= want:
                break
        return out[:want]

    async def refresh(self, collection: str, *, with_metadata: bool = True) -> None:
        """Bring the index up to date now (waits for a background check already running)."""
        stamp = await self._store.stamp(collection)
        if stamp is not None:
            await self._stamped(collection, stamp, with_metadata=with_metadata)
            return
        running = self._refreshing.get(collection)
        if running is not None:
            await asyncio.shield(running)
        await self._rebuild(collection, with_metadata=with_metadata)

    async def _index(self, collection: str, *, with_metadata: bool) -> _Index:
        stamp = await self._store.stamp(collection)
        if stamp is not None:
            return await self._stamped(collection, stamp, with_metadata=with_metadata)
        current = self._indexes.get(collection)
        if current is None:
            if self._cache_dir is not None:
                loaded = await self._load(collection)
                if loaded is not None:
                    self._indexes[collection] = loaded
                    self._checked[collection] = time.monotonic()
                    return loaded
            return await self._rebuild(collection, only_if_missing=True, with_metadata=with_metadata)
        stale = time.monotonic() - self._checked.get(collection, 0.0) >= self._refresh
        if stale:
            self._behind(collection, self._rebuild(collection, with_metadata=with_metadata))
        return current

    async def _stamped(self, collection: str, stamp: str, *, with_metadata: bool) -> _Index:
        """The index of the collection as written at ``stamp``: kept, loaded from the cache, or built.

        A large collection (more than ``exact_max`` documents: reading and indexing 100,000 texts takes
        ~9 s) is rebuilt behind the queries instead: until it is, they rank with the index they have,
        whose records are read back from the store, so none the store no longer holds is answered.
        """
        current = self._indexes.get(collection)
        if current is not None and current.stamp == stamp:
            return current
        if current is not None and len(current.ids) > self._exact_max:
            self._behind(collection, self._build_stamped(collection, stamp, with_metadata=with_metadata))
            return dataclasses.replace(current, records=None)
        return await self._build_stamped(collection, stamp, with_metadata=with_metadata)

    async def _build_stamped(self, collection: str, stamp: str, *, with_metadata: bool) -> _Index:
        async with self._lock:
            current = self._indexes.get(collection)
            if current is not None and current.stamp == stamp:  # concurrent queries: one build serves all
                return current
            index = await self._load_stamped(collection, stamp) if self._cache_dir is not None else None
            if index is None:
                index = await self._build_from_store(collection, with_metadata=with_metadata)
                index.stamp = stamp
                if self._cache_dir is not None and index.ids:
                    await asyncio.to_thread(self._save, collection, index, self._stamped_path(collection, stamp))
            self._indexes[collection] = index
            self._checked[collection] = time.monotonic()
            return index

    def _behind(self, collection: str, build: Coroutine[Any, Any, _Index]) -> None:
        """Run ``build`` behind the queries, one at a time per collection (a second is dropped unstarted)."""
        if collection in self._refreshing:
            build.close()
            return
        task = asyncio.create_task(self._guarded(collection, build), name=f"kubevec-lexical-{collection}")
        self._refreshing[collection] = task

    async def _guarded(self, collection: str, build: Coroutine[Any, Any, _Index]) -> None:
        try:
            await build
        except BackendError as exc:  # keep serving the index we have; the next query tries again
            logger.warning("Lexical index refresh failed collection=%s error=%s", collection, exc)
        except Exception:
            logger.exception("Lexical index refresh crashed collection=%s", collection)
        finally:
            self._refreshing.pop(collection, None)

    async def _build_from_store(self, collection: str, *, with_metadata: bool) -> _Index:
        """Read every record (or text) of the collection and index it."""
        records: list[Record] | None = None
        if with_metadata:
            records = [r async for r in self._store.iter_records(collection, page_size=1000)]
            pairs = [(r.id, corpus_text(r)) for r in records]
            fingerprint = _fingerprint((r.id, fields.CONTENT_HASH.of(r.metadata)) for r in records)
        else:
            pairs = [pair async for pair in self._store.iter_texts(collection, page_size=1000)]
            fingerprint = "texts:" + _fingerprint((i, hashlib.sha256(t.encode()).hexdigest()) for i, t in pairs)
        return await asyncio.to_thread(_build, pairs, records, fingerprint)

    async def _rebuild(self, collection: str, *, with_metadata: bool, only_if_missing: bool = False) -> _Index:
        async with self._lock:
            built = self._indexes.get(collection)
            if only_if_missing and built is not None:  # concurrent first queries: one build serves all
                return built
            index = await self._build_from_store(collection, with_metadata=with_metadata)
            self._checked[collection] = time.monotonic()
            current = self._indexes.get(collection)
            if current is not None and current.fingerprint == index.fingerprint:
                return current
            self._indexes[collection] = index
            if self._cache_dir is not None and index.ids:
                await asyncio.to_thread(self._save, collection, index, self._path(collection, index.ids))
            return index

    # -- the disk cache --------------------------------------------------------------------------

    def _path(self, collection: str, ids: Sequence[str]) -> Path:
        assert self._cache_dir is not None
        members = hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:24]
        return self._cache_dir / f"{collection}-{members}"

    def _stamped_path(self, collection: str, stamp: str) -> Path:
        assert self._cache_dir is not None
        return self._cache_dir / f"{collection}-s{hashlib.sha256(stamp.encode()).hexdigest()[:24]}"

    async def _load_stamped(self, collection: str, stamp: str) -> _Index | None:
        """The index another process saved at this stamp, whatever its age: the collection is as it was then."""
        path = self._stamped_path(collection, stamp)
        if not (path / IDS_FILE).is_file():
            return None
        loaded = await self._read_saved(path)
        if loaded is None:
            return None
        ids, retriever = loaded
        return _Index(ids=ids, records=None, retriever=retriever, fingerprint=f"saved:{path.name}", stamp=stamp)

    async def _read_saved(self, path: Path) -> tuple[list[str], Any] | None:
        try:
            saved = json.loads((path / IDS_FILE).read_text())
            retriever = await asyncio.to_thread(_bm25s().BM25.load, str(path), show_progress=False)
        except (OSError, ValueError) as exc:  # a half-written or foreign cache: rebuild it
            logger.warning("Ignoring a lexical index cache path=%s error=%s", path, exc)
            return None
        return [str(i) for i in saved], retriever

    async def _load(self, collection: str) -> _Index | None:
        ids = await self._store.list_ids(collection)
        path = self._path(collection, ids)
        try:
            age = time.time() - (path / IDS_FILE).stat().st_mtime
        except OSError:
            return None
        if age > self._cache_max_age:
            return None
        loaded = await self._read_saved(path)
        if loaded is None:
            return None
        saved, retriever = loaded
        if sorted(saved) != sorted(ids):
            return None
        return _Index(ids=saved, records=None, retriever=retriever, fingerprint=f"saved:{path.name}")

    def _save(self, collection: str, index: _Index, path: Path) -> None:
        """Write beside any older cache, then rename into place: a reader never loads half an index."""
        try:
            assert self._cache_dir is not None
            self._cache_dir.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{collection}-", dir=self._cache_dir))
            index.retriever.save(str(staging), show_progress=False)
            (staging / IDS_FILE).write_text(json.dumps(index.ids))
            shutil.rmtree(path, ignore_errors=True)
            os.replace(staging, path)
            for old in self._cache_dir.glob(f"{collection}-*"):  # one saved index per collection
                if old != path:
                    shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:  # a read-only or full disk only costs the next call a rebuild
            logger.warning("Could not save the lexical index path=%s error=%s", path, exc)


def _fingerprint(pairs: Iterable[tuple[str, str]]) -> str:
    """A hash of every (id, hash of its content): equal when the collection holds the same documents."""
    digest = hashlib.sha256()
    for document_id, content in sorted(pairs):
        digest.update(f"{document_id}\0{content}\n".encode())
    return digest.hexdigest()


def _build(pairs: list[tuple[str, str]], records: list[Record] | None, fingerprint: str) -> _Index:
    """BM25 over each (id, corpus text); ``records`` in the same order are kept to answer from, if given."""
    retriever = _bm25s().BM25()
    if pairs:
        tokens = _bm25s().tokenize([text for _, text in pairs], stopwords="en", show_progress=False)
        retriever.index(tokens, show_progress=False)
    return _Index(ids=[i for i, _ in pairs], records=records, retriever=retriever, fingerprint=fingerprint)
