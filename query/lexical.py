"""BM25 over the stored documents, kept in step with the store by what each write changed.

The corpus of a record is its text plus the fields and description kept in its metadata, so
exact words an embedding blurs ("PgBouncer", "SQS", "cosign") still find their resource; a
collection whose metadata holds no words of its own (instances: ``with_metadata=False``) is
indexed from its texts alone, and its ranked records are read back from the store by id (so a
record the store no longer holds is never answered).

The index (keyword_index.py: tantivy, on disk in ``cache_dir``, shared by every reader of the
machine) follows the store's write stamps: every query first reads its collection's stamp (one small
read). When a writer wrote since, the index is brought up to date from the store's journal
(backends/journal.py): the records those writes touched are read back and replaced, the deleted
ones removed. So a 100,000-document index follows a controller's writes by reading what changed,
a new process opens the index the last one left instead of building it, and a reader never answers
from the words of records the store no longer holds.

The index is built from every record only when there is none, when the journal cannot say what
changed (a store written by an older kubevec, a collection dropped or created, a reader that last
caught up longer ago than the journal keeps), or when a catch-up would touch more than
``exact_max`` documents. Past ``exact_max`` documents such a build runs behind the queries, which
meanwhile rank with the index they have. A store no writer of this version has stamped is indexed
again every ``refresh_seconds``, behind the queries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from kubevec.backends import Record, VectorStore
from kubevec.backends.journal import CATCH_UP_WITHIN, SLACK, Entry
from kubevec.core import fields
from kubevec.core.errors import BackendError
from kubevec.query.keyword_index import KeywordIndex, State, WriterBusy

logger = logging.getLogger(__name__)

#: Up to this many documents a build runs before the next query is answered (~1.5 s at 20,000
#: instance texts in embedded Chroma), and a catch-up may touch this many; larger ones run behind.
EXACT_MAX_DOCUMENTS = 20_000
#: How long a query waits for another process that holds the writer lock to bring the index up to date.
BUSY_WAIT_SECONDS = 2.0
#: Records read and indexed at a time by a build.
BUILD_PAGE = 1000


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
    """One keyword index per collection, following what writers change."""

    def __init__(
        self,
        *,
        store: VectorStore,
        refresh_seconds: float = 30.0,
        cache_dir: Path | None = None,
        exact_max: int = EXACT_MAX_DOCUMENTS,
    ) -> None:
        self._store = store
        self._exact_max = exact_max
        self._refresh = refresh_seconds
        self._cache_dir = cache_dir
        self._indexes: dict[str, KeywordIndex] = {}
        self._built: dict[str, float] = {}
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def rank(
        self,
        collection: str,
        *,
        text: str,
        k: int,
        with_metadata: bool = True,
        keep: Callable[[Record], bool] | None = None,
        want: int | None = None,
        include_vectors: bool = False,
    ) -> list[tuple[Record, float]]:
        """Records by BM25 score (positive scores only), best first: of the best ``k``, the first ``want``
        that ``keep`` accepts (default: all), read back by id a batch of ``want`` at a time, so an
        unfiltered query reads only what it returns (``include_vectors``: with their vectors, in the
        same read)."""
        index = await self._current(collection, with_metadata=with_metadata)
        try:
            best = index.search(text, k=k)
        except ValueError as exc:  # tantivy could not read a segment: build this index again
            logger.warning("Building a damaged keyword index again collection=%s error=%s", collection, exc)
            self._indexes.pop(collection, None)
            if index.path is not None:
                shutil.rmtree(index.path, ignore_errors=True)
            best = (await self._current(collection, with_metadata=with_metadata)).search(text, k=k)
        ranked = [(i, score) for i, score in best if score > 0]
        if not ranked:
            return []
        want = want or len(ranked)
        out: list[tuple[Record, float]] = []
        for start in range(0, len(ranked), want):
            batch = ranked[start : start + want]
            asked = [i for i, _ in batch]
            found = {r.id: r for r in await self._store.get(collection, asked, include_vectors=include_vectors)}
            for document_id, score in batch:
                record = found.get(document_id)  # None: deleted since the index saw it
                if record is not None and (keep is None or keep(record)):
                    out.append((record, score))
            if len(out) >= want:
                break
        return out[:want]

    async def named(
        self, collection: str, names: Sequence[str], *, with_metadata: bool, limit: int
    ) -> list[str] | None:
        """Ids of up to ``limit`` documents of ``collection`` whose id ends with one of ``names`` (an instance's
        object name), from the index as the collection is written now; None while it is first built (ask
        the store)."""
        index = await self._current(collection, with_metadata=with_metadata)
        if index.state.stamp is None:
            return None
        return index.named(names, limit=limit)

    async def refresh(self, collection: str, *, with_metadata: bool = True) -> None:
        """Bring the index up to date now (waits for a build already running behind the queries)."""
        running = self._refreshing.get(collection)
        if running is not None:
            await asyncio.shield(running)
        await self._current(collection, with_metadata=with_metadata, wait=True)

    # -- keeping up -------------------------------------------------------------------------------

    async def _current(self, collection: str, *, with_metadata: bool, wait: bool = False) -> KeywordIndex:
        stamp = await self._store.stamp(collection)
        index = self._opened(collection)
        if stamp is None:
            return await self._unstamped(collection, index, with_metadata=with_metadata, wait=wait)
        if index.state.stamp == stamp:
            return index
        if collection in self._refreshing and not wait:  # a build is on its way: rank with what we have
            return index
        async with self._lock(collection):
            await asyncio.to_thread(index.reread)  # another process may have brought it up to date
            if index.state.stamp == stamp:
                return index
            try:
                if await self._catch_up(collection, stamp, index, with_metadata=with_metadata):
                    return index
            except WriterBusy:
                return await self._others_update(collection, stamp, index)
            build = self._build(collection, stamp, index, with_metadata=with_metadata)
            if await self._small(collection, index):
                await self._guard_busy(build)
                return index
        self._behind(collection, build)  # the queries meanwhile rank with the index they have
        running = self._refreshing.get(collection)
        if wait and running is not None:
            await asyncio.shield(running)
        return index

    async def _small(self, collection: str, index: KeywordIndex) -> bool:
        """Whether a build of ``collection`` may keep a query waiting: up to ``exact_max`` documents. A first
        build of a larger one (no index yet: 10-25 s at 100,000) runs behind the queries, which meanwhile
        rank without words and find named objects in the store."""
        size = index.size if index.state.stamp is not None else await self._store.count(collection)
        return size <= self._exact_max

    async def _unstamped(
        self, collection: str, index: KeywordIndex, *, with_metadata: bool, wait: bool
    ) -> KeywordIndex:
        """A store no writer of this version stamped: indexed on first use, then again every ``refresh_seconds``."""
        built = self._built.get(collection)
        if built is None or wait:
            async with self._lock(collection):
                if self._built.get(collection) is None or wait:
                    await self._guard_busy(self._build(collection, None, index, with_metadata=with_metadata))
            return index
        if time.monotonic() - built >= self._refresh:
            self._built[collection] = time.monotonic()  # one refresh at a time
            self._behind(collection, self._build(collection, None, index, with_metadata=with_metadata))
        return index

    async def _catch_up(self, collection: str, stamp: str, index: KeywordIndex, *, with_metadata: bool) -> bool:
        """Apply the journal's entries since the index's watermark; False when only a build can tell."""
        state = index.state
        if state.stamp is None or time.time() - state.caught_up > CATCH_UP_WITHIN:
            return False
        entries = await self._store.journal(collection, since=state.watermark - SLACK)
        if entries is None:
            return False
        fresh = [entry for entry in entries if entry.id not in state.applied]
        if any(entry.reset for entry in fresh):
            return False
        if not fresh and await self._store.count(collection) != index.size:
            return False  # written, yet nothing journaled (a store restored or replaced): start over
        touched = {i for entry in fresh for i in (*entry.upserted, *entry.deleted)}
        if len(touched) > self._exact_max:
            return False
        records = await self._store.get(collection, sorted(touched)) if touched else []
        pairs = [(r.id, corpus_text(r) if with_metadata else r.text) for r in records]
        removed = touched - {r.id for r in records}
        if any(entry.members for entry in fresh):
            stored = set(await self._store.list_ids(collection))
            removed |= await asyncio.to_thread(index.ids) - stored
        await asyncio.to_thread(index.apply, upserted=pairs, removed=removed, state=_after(state, stamp, fresh))
        if touched or removed:
            logger.debug(
                "Caught up the keyword index collection=%s entries=%d upserted=%d removed=%d",
                collection,
                len(fresh),
                len(pairs),
                len(removed),
            )
        return True

    async def _build(self, collection: str, stamp: str | None, index: KeywordIndex, *, with_metadata: bool) -> None:
        """Index every record; the journal is followed from where it stood before the read began (what
        was journaled before is in what is read; what is journaled during the read is applied again)."""
        began = time.time()
        before = await self._store.journal(collection, since=began - 2 * SLACK) if stamp is not None else None
        rewriting = await asyncio.to_thread(index.rewriting)
        count = 0
        try:
            page: list[tuple[str, str]] = []
            async for pair in self._pairs(collection, with_metadata=with_metadata):
                page.append(pair)
                if len(page) == BUILD_PAGE:
                    await asyncio.to_thread(rewriting.add, page)
                    count, page = count + len(page), []
            await asyncio.to_thread(rewriting.add, page)
            count += len(page)
        except BaseException as exc:
            await asyncio.to_thread(rewriting.abandon, exc)
            raise
        state = _after(State(stamp=stamp, watermark=began - SLACK), stamp, before or [])
        await asyncio.to_thread(rewriting.commit, state)
        self._built[collection] = time.monotonic()
        logger.info("Built the keyword index collection=%s documents=%d", collection, count)

    async def _pairs(self, collection: str, *, with_metadata: bool) -> AsyncIterator[tuple[str, str]]:
        if with_metadata:
            async for record in self._store.iter_records(collection, page_size=BUILD_PAGE):
                yield record.id, corpus_text(record)
        else:
            async for pair in self._store.iter_texts(collection, page_size=BUILD_PAGE):
                yield pair

    async def _others_update(self, collection: str, stamp: str, index: KeywordIndex) -> KeywordIndex:
        """Another process holds the writer: wait a little for it to reach ``stamp``, else rank with what is there."""
        deadline = time.monotonic() + BUSY_WAIT_SECONDS
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            await asyncio.to_thread(index.reread)
            if index.state.stamp == stamp:
                break
        return index

    async def _guard_busy(self, build: Coroutine[Any, Any, None]) -> None:
        with contextlib.suppress(WriterBusy):  # another process is building the same index: read what it commits
            await build

    def _behind(self, collection: str, build: Coroutine[Any, Any, None]) -> None:
        """Run ``build`` behind the queries, one at a time per collection (a second is dropped unstarted)."""
        if collection in self._refreshing:
            build.close()
            return
        task = asyncio.create_task(self._guarded(collection, build), name=f"kubevec-lexical-{collection}")
        self._refreshing[collection] = task

    async def _guarded(self, collection: str, build: Coroutine[Any, Any, None]) -> None:
        try:
            async with self._lock(collection):
                await self._guard_busy(build)
        except BackendError as exc:  # keep serving the index we have; the next query tries again
            logger.warning("Keyword index refresh failed collection=%s error=%s", collection, exc)
        except Exception:
            logger.exception("Keyword index refresh crashed collection=%s", collection)
        finally:
            self._refreshing.pop(collection, None)

    def _lock(self, collection: str) -> asyncio.Lock:
        return self._locks.setdefault(collection, asyncio.Lock())

    def _opened(self, collection: str) -> KeywordIndex:
        """The collection's index, opened once per process (from ``cache_dir`` when there is one)."""
        index = self._indexes.get(collection)
        if index is None:
            path = None
            if self._cache_dir is not None:
                path = self._cache_dir / collection
                for old in self._cache_dir.glob(f"{collection}-*"):  # an earlier version's saved index
                    shutil.rmtree(old, ignore_errors=True)
            try:
                index = KeywordIndex.open(path=path)
            except OSError as exc:  # an unwritable cache: an index in memory serves as well
                logger.warning("Keeping the keyword index in memory path=%s error=%s", path, exc)
                index = KeywordIndex.open(path=None)
            self._indexes[collection] = index
        return index


def _after(state: State, stamp: str | None, fresh: list[Entry]) -> State:
    """The state once ``fresh`` is applied: the newest time seen, and what was applied within the slack of it."""
    watermark = max([state.watermark, *(entry.at for entry in fresh)])
    applied = {i: at for i, at in state.applied.items() if at >= watermark - SLACK}
    applied.update({entry.id: entry.at for entry in fresh if entry.at >= watermark - SLACK})
    return State(stamp=stamp, watermark=watermark, applied=applied)
