"""The backend-agnostic store: the template base class every backend fills in.

Callers hold the protocol (protocol.py, re-exported here under its old name); what a store accepts
is checked in checks.py before any hook runs.

The public methods of :class:`BaseStore` validate input, batch to the backend's limits, run the
backend's (synchronous) client on one worker thread, and wrap every backend exception into
:class:`~kubevec.core.errors.BackendError` / :class:`~kubevec.core.errors.BackendUnavailable`. Backends
implement the small ``_hooks``. Retrying is the caller's job: the sync engine retries with backoff,
the CLI reports once and exits. Every public operation is also where a store is observed: the
controller sets ``observer`` (its metrics) and is told of each operation's time and failure, so no
proxy has to forward the protocol method by method and the backends stay free of Prometheus.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from kubevec.backends.checks import check_field, check_k, check_name, check_record, check_same, without_empty_lists
from kubevec.backends.filters import And, Contains, Eq, Filter, Gte, Lt, all_of, validate, words
from kubevec.backends.journal import (
    AT_FIELD,
    COLLECTION_FIELD,
    JOURNAL,
    JOURNAL_EMBEDDER,
    RETENTION,
    TRIM_EVERY,
    Entry,
    entry_of,
    entry_records,
)
from kubevec.backends.protocol import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
from kubevec.backends.protocol import CollectionInfo as CollectionInfo
from kubevec.backends.protocol import Cursor as Cursor
from kubevec.backends.protocol import Distance, StoreObserver
from kubevec.backends.protocol import VectorStore as VectorStore
from kubevec.backends.records import Health, Hit, Record, StoredHashes
from kubevec.backends.stamps import STAMPS, STAMPS_EMBEDDER, new_stamp, stamps_of
from kubevec.core import fields
from kubevec.core.errors import BackendError, CollectionNotFound, InvalidFilter, InvalidRecord

T = TypeVar("T")
P = ParamSpec("P")

S = TypeVar("S", bound="BaseStore")


def _measured(
    operation: str,
) -> Callable[
    [Callable[Concatenate[S, P], Coroutine[Any, Any, T]]], Callable[Concatenate[S, P], Coroutine[Any, Any, T]]
]:
    """Tell the store's observer of each call of this public operation: its time, and whether it failed."""

    def wrap(
        method: Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
    ) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
        @functools.wraps(method)
        async def measured(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
            observer = self.observer
            if observer is None:
                return await method(self, *args, **kwargs)
            started, failed = time.perf_counter(), True
            try:
                result = await method(self, *args, **kwargs)
                failed = False
                return result
            finally:
                observer.observed(
                    backend=self._backend, operation=operation, seconds=time.perf_counter() - started, failed=failed
                )

        return measured

    return wrap


def _measured_pages(
    operation: str,
) -> Callable[[Callable[Concatenate[S, P], AsyncIterator[T]]], Callable[Concatenate[S, P], AsyncIterator[T]]]:
    """:func:`_measured` for an operation that yields pages: timed from the first page to the last."""

    def wrap(method: Callable[Concatenate[S, P], AsyncIterator[T]]) -> Callable[Concatenate[S, P], AsyncIterator[T]]:
        @functools.wraps(method)
        async def measured(self: S, /, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
            observer = self.observer
            started, failed = time.perf_counter(), True
            try:
                async for item in method(self, *args, **kwargs):
                    yield item
                failed = False
            finally:
                if observer is not None:
                    observer.observed(
                        backend=self._backend, operation=operation, seconds=time.perf_counter() - started, failed=failed
                    )

        return measured

    return wrap


class BaseStore:
    """Template: validation, batching, threading and error wrapping around a backend's hooks."""

    #: Largest number of records one backend call may carry.
    max_batch: int = 1000

    def __init__(self, *, backend: str, location: str, follow: bool = False) -> None:
        """``follow``: this process only reads a store other processes write (``kubevec mcp``, the
        resident CLI reader); every operation then first compares the write stamps (stamps.py) and
        the backend reopens what it caches when a writer changed the collection it reads."""
        self._backend = backend
        self._location = location
        self._follow = follow
        #: Every collection's stamp when this (following) process last opened the store.
        self._opened_stamps: dict[str, str] | None = None
        #: Internal collections (stamps, journal) this process knows exist.
        self._internal_ready: set[str] = set()
        self._trimmed = 0.0
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"kubevec-{backend}")
        self._infos: dict[str, CollectionInfo] = {}
        self.observer: StoreObserver | None = None

    @property
    def backend(self) -> str:
        return self._backend

    @property
    def location(self) -> str:
        return self._location

    # -- public API --------------------------------------------------------------------------------

    @_measured("ensure_collection")
    async def ensure_collection(
        self,
        name: str,
        *,
        dimension: int,
        distance: Distance = "cosine",
        embedder: str,
        indexed: Sequence[str] = (),
    ) -> None:
        """Create the collection, or check that the existing one was built the same way.

        A mismatch raises :class:`CollectionMismatch` naming both values: vectors of another
        model or size must never be mixed into (or queried against) a collection. ``indexed`` names
        the metadata fields callers filter on (exact values); a backend that keeps payload indexes
        creates the missing ones, also on an existing collection, so a new field is never left
        unindexed. The payload contract (which fields exist) belongs to the caller, not the backend.
        """
        check_name(name)
        if dimension <= 0:
            raise InvalidRecord(f"Collection dimension must be positive, got {dimension}")
        if distance != "cosine":
            raise BackendError(f"Only cosine distance is supported, got {distance!r}")
        wanted = CollectionInfo(dimension=dimension, distance=distance, embedder=embedder)
        existing = await self._call(self._describe, name)
        if existing is None:
            await self._call(self._create, name, wanted)
            await self._written(name, reset=True)
        else:
            check_same(name=name, existing=existing, wanted=wanted, location=self._location)
        for field in indexed:
            check_field(field)
        await self._call(self._ensure_indexes, name, tuple(dict.fromkeys(indexed)))
        self._infos[name] = wanted

    @_measured("drop_collection")
    async def drop_collection(self, name: str) -> None:
        check_name(name)
        self._infos.pop(name, None)
        await self._call(self._drop, name)
        await self._written(name, reset=True)

    @_measured("collection_info")
    async def collection_info(self, name: str) -> CollectionInfo | None:
        check_name(name)
        await self._follow_writers(name)
        return await self._call(self._describe, name)

    @_measured("upsert")
    async def upsert(self, name: str, records: Sequence[Record]) -> None:
        """Insert or replace records by id (idempotent); a repeated id in one call keeps the last."""
        info = await self._info(name)
        latest: dict[str, Record] = {}
        for record in records:
            check_record(record, dimension=info.dimension)
            latest[record.id] = without_empty_lists(record)
        batch = list(latest.values())
        for start in range(0, len(batch), self.max_batch):
            await self._call(self._upsert, name, batch[start : start + self.max_batch])
        if batch:
            await self._written(name, upserted=[record.id for record in batch])

    @_measured("delete")
    async def delete(self, name: str, ids: Sequence[str]) -> None:
        """Delete by id; ids that are not stored are ignored."""
        await self._info(name)
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), self.max_batch):
            await self._call(self._delete, name, unique[start : start + self.max_batch])
        if unique:
            await self._written(name, deleted=unique)

    @_measured("delete_where")
    async def delete_where(self, name: str, filter: Filter) -> None:
        await self._info(name)
        await self._call(self._delete_where, name, validate(filter))
        await self._written(name, members=True)

    @_measured("get")
    async def get(self, name: str, ids: Sequence[str], *, include_vectors: bool = False) -> list[Record]:
        """Records for the ids that exist, in the order asked; missing ids are left out."""
        return await self._get_records(name, ids, include_vectors=include_vectors)

    async def _get_records(self, name: str, ids: Sequence[str], *, include_vectors: bool) -> list[Record]:
        await self._info(name)
        unique = list(dict.fromkeys(ids))
        found: dict[str, Record] = {}
        for start in range(0, len(unique), self.max_batch):
            for record in await self._call(self._get, name, unique[start : start + self.max_batch], include_vectors):
                found[record.id] = record
        return [found[i] for i in unique if i in found]

    @_measured("sample")
    async def sample(self, name: str, *, limit: int) -> list[Record]:
        """Up to ``limit`` records with their vectors, those the store reads cheapest (what a statistic of the
        collection, such as its mean vector, is estimated from), in id order: the same in every process."""
        await self._info(name)
        found = await self._call(self._sample, name, limit)
        if found is None:  # no cheaper way: the first ``limit`` in id order
            ids: list[str] = []
            async for record_id, _ in self.iter_ids(name, page_size=limit):
                ids.append(record_id)
                if len(ids) >= limit:
                    break
            found = await self._get_records(name, ids, include_vectors=True)
        return sorted(found[:limit], key=lambda record: record.id)

    @_measured("count")
    async def count(self, name: str, filter: Filter | None = None) -> int:
        await self._info(name)
        return await self._call(self._count, name, validate(filter) if filter is not None else None)

    @_measured("list_ids")
    async def list_ids(self, name: str) -> list[str]:
        """Every id, without payloads: what tells a cached index whether the collection's members changed."""
        await self._info(name)
        return await self._call(self._ids, name, None)

    @_measured("stamp")
    async def stamp(self, name: str) -> str | None:
        """``name``'s write stamp now; a value other than an earlier one means somebody wrote since.

        None: no write of this version stamped it (stamps.py). One small read, whatever the size.
        """
        check_name(name)
        return (await self._follow_writers(name, always=True)).get(name)

    @_measured("journal")
    async def journal(self, name: str, *, since: float) -> list[Entry] | None:
        """What writes to ``name`` changed from ``since`` (writer's wall clock) on, oldest first (journal.py).

        None: this store keeps no journal yet (written by an older kubevec): the caller cannot know
        what changed and starts over.
        """
        check_name(name)
        if await self._call(self._describe, JOURNAL) is None:
            return None
        where = And((Eq(COLLECTION_FIELD, name), Gte(AT_FIELD, since)))
        entries = [entry_of(r) async for r in self._scan(JOURNAL, filter=where, page_size=1000, with_text=True)]
        return sorted(entries, key=lambda entry: entry.at)

    @_measured_pages("iter_ids")
    async def iter_ids(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[tuple[str, str]]:
        """Every ``(id, content_hash)``, page by page, with no cap on the total."""
        async for record in self._scan(name, filter=filter, page_size=page_size, with_text=False):
            yield record.id, fields.CONTENT_HASH.of(record.metadata)

    @_measured_pages("iter_hashes")
    async def iter_hashes(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[tuple[str, StoredHashes]]:
        """Every ``(id, (content_hash, text_hash))``, page by page: what the sync engine plans writes from."""
        async for record in self._scan(name, filter=filter, page_size=page_size, with_text=False):
            metadata = record.metadata
            yield (
                record.id,
                StoredHashes(
                    fields.CONTENT_HASH.of(metadata),
                    fields.TEXT_HASH.of(metadata),
                    fields.BUILT_FROM.of(metadata),
                    fields.CLUSTER.of(metadata),
                ),
            )

    @_measured_pages("iter_records")
    async def iter_records(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[Record]:
        """Every record with text and metadata (vectors left empty), page by page."""
        async for record in self._scan(name, filter=filter, page_size=page_size, with_text=True):
            yield record

    @_measured_pages("iter_texts")
    async def iter_texts(self, name: str, *, page_size: int = DEFAULT_PAGE_SIZE) -> AsyncIterator[tuple[str, str]]:
        """Every ``(id, text)``, page by page, without metadata: all a lexical index of texts reads.

        Metadata is most of the cost of a full scan in Chroma (12,000 instance documents: 0.5 s of
        metadata, 0.17 s of texts), and an index rebuilt every 30 s should not pay it.
        """
        await self._info(name)
        if page_size <= 0:
            raise ValueError(f"page_size must be positive, got {page_size}")
        cursor: Cursor | None = None
        while True:
            page, cursor = await self._call(self._text_page, name, cursor, page_size)
            for item in page:
                yield item
            if cursor is None:
                return

    @_measured("search")
    async def search(
        self,
        name: str,
        *,
        vector: Sequence[float],
        k: int,
        filter: Filter | None = None,
        text_contains: str | None = None,
    ) -> list[Hit]:
        """Nearest neighbours by cosine; scores are similarities clipped to [0, 1]."""
        info = await self._info(name)
        check_k(k)
        if len(vector) != info.dimension:
            raise InvalidRecord(f"Query vector has {len(vector)} dimensions, collection {name!r} has {info.dimension}")
        combined = all_of(validate(filter) if filter else None, Contains(text_contains) if text_contains else None)
        if combined is not None:
            validate(combined)
        hits = await self._call(self._search, name, [float(x) for x in vector], k, combined)
        return sorted(hits, key=lambda hit: (-hit.score, hit.id))[:k]

    @_measured("keyword_search")
    async def keyword_search(self, name: str, *, text: str, filter: Filter | None = None, k: int) -> list[Hit]:
        """Records containing any word of ``text``, without embedding anything.

        Score = the share of the query's distinct words the record contains (so in [0, 1]). Ties
        go to the record whose matched words are rarer in the collection (a word in 3 records says
        more than one in 20,000), then to the smaller id. Ranking needs only the ids matching each
        word, never the texts, so a word found in every record costs an id listing, not a scan of
        all texts; just the k results are read in full.
        """
        await self._info(name)
        check_k(k)
        query_words = list(dict.fromkeys(words(text)))
        if not query_words:
            raise BackendError("Keyword search needs at least one word (letters or digits)")
        checked = validate(filter) if filter else None
        matched: dict[str, int] = {}
        rarity: dict[str, float] = {}
        for word in query_words:
            ids = await self._call(self._ids, name, all_of(checked, Contains(word)))
            for record_id in ids:
                matched[record_id] = matched.get(record_id, 0) + 1
                rarity[record_id] = rarity.get(record_id, 0.0) + 1.0 / len(ids)
        best = sorted(matched, key=lambda i: (-matched[i], -rarity[i], i))[:k]
        records = await self._get_records(name, best, include_vectors=False)
        return [Hit(id=r.id, score=matched[r.id] / len(query_words), text=r.text, metadata=r.metadata) for r in records]

    @_measured("health")
    async def health(self) -> Health:
        try:
            detail = await self._call(self._health)
        except BackendError as exc:
            return Health(ok=False, backend=self._backend, detail=str(exc))
        return Health(ok=True, backend=self._backend, detail=detail)

    async def close(self) -> None:
        try:
            await self._call(self._close)
        finally:
            self._executor.shutdown(wait=False, cancel_futures=True)

    # -- internals ---------------------------------------------------------------------------------

    async def _info(self, name: str) -> CollectionInfo:
        check_name(name)
        await self._follow_writers(name)
        info = self._infos.get(name)
        if info is None:
            info = await self._call(self._describe, name)
            if info is None:
                raise CollectionNotFound(
                    f"Collection {name!r} does not exist in {self._backend} at {self._location}; "
                    "run the controller or `kubevec index crds` first"
                )
            self._infos[name] = info
        return info

    async def _scan(
        self, name: str, *, filter: Filter | None, page_size: int, with_text: bool
    ) -> AsyncIterator[Record]:
        await self._info(name)
        if page_size <= 0:
            raise ValueError(f"page_size must be positive, got {page_size}")
        checked = validate(filter) if filter is not None else None
        cursor: Cursor | None = None
        while True:
            page, cursor = await self._call(self._page, name, checked, cursor, page_size, with_text)
            for record in page:
                yield record
            if cursor is None:
                return

    async def _written(
        self,
        name: str,
        *,
        upserted: Sequence[str] = (),
        deleted: Sequence[str] = (),
        members: bool = False,
        reset: bool = False,
    ) -> None:
        """Journal what the write changed, then give ``name`` a new stamp, both after its data:
        whoever reads this stamp or this entry sees the write."""
        if name in (STAMPS, JOURNAL):
            return
        entries = entry_records(name, upserted=upserted, deleted=deleted, members=members, reset=reset)
        await self._call(self._journal_write, entries)
        await self._call(self._stamp, name)

    async def _follow_writers(self, name: str | None = None, *, always: bool = False) -> dict[str, str]:
        """For a following store, reopen when another process wrote ``name`` since it opened; the stamps now.

        Every public operation on a collection looks first (one small read), so an answer is never
        older than the writes that ended before it began; writes to other collections (the
        controller's status record, its change history) cost no reopen. Not following: read only
        when asked (``always``).
        """
        if not (self._follow or always):
            return {}
        stamps = await self._call(self._read_stamps)
        if self._follow:
            if self._opened_stamps is None:
                self._opened_stamps = stamps
            elif name is not None and stamps.get(name) != self._opened_stamps.get(name):
                self._infos.clear()
                await self._call(self._reopen)
                self._opened_stamps = stamps
        return stamps

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, functools.partial(fn, *args))
        except (BackendError, InvalidRecord, InvalidFilter):
            raise
        except Exception as exc:
            error = self._translate_error(exc)
            if isinstance(error, CollectionNotFound):
                self._infos.clear()  # dropped elsewhere (a migration): described again on the next call
            raise error from exc

    # -- hooks (run on the worker thread) -----------------------------------------------------------

    def _translate_error(self, exc: Exception) -> Exception:
        return BackendError(f"{self._backend} at {self._location} failed: {type(exc).__name__}: {exc}")

    def _describe(self, name: str) -> CollectionInfo | None:
        raise NotImplementedError

    def _create(self, name: str, info: CollectionInfo) -> None:
        raise NotImplementedError

    def _ensure_indexes(self, name: str, fields: tuple[str, ...]) -> None:
        """Index these metadata fields for exact-value filters; a no-op where filters need no index."""

    def _drop(self, name: str) -> None:
        raise NotImplementedError

    def _upsert(self, name: str, records: list[Record]) -> None:
        raise NotImplementedError

    def _delete(self, name: str, ids: list[str]) -> None:
        raise NotImplementedError

    def _delete_where(self, name: str, filter: Filter) -> None:
        raise NotImplementedError

    def _get(self, name: str, ids: list[str], include_vectors: bool) -> list[Record]:
        raise NotImplementedError

    def _count(self, name: str, filter: Filter | None) -> int:
        raise NotImplementedError

    def _sample(self, name: str, limit: int) -> list[Record] | None:
        """``limit`` records with vectors in one cheap read, or None (then :meth:`sample` pages ids in order)."""
        return None

    def _page(
        self, name: str, filter: Filter | None, cursor: Cursor | None, limit: int, with_text: bool
    ) -> tuple[list[Record], Cursor | None]:
        raise NotImplementedError

    def _text_page(self, name: str, cursor: Cursor | None, limit: int) -> tuple[list[tuple[str, str]], Cursor | None]:
        """A page of ``(id, text)``; backends override this to skip reading metadata."""
        records, cursor = self._page(name, None, cursor, limit, True)
        return [(record.id, record.text) for record in records], cursor

    def _search(self, name: str, vector: list[float], k: int, filter: Filter | None) -> list[Hit]:
        raise NotImplementedError

    def _ids(self, name: str, filter: Filter | None) -> list[str]:
        """Every id matching ``filter``; backends override this to skip reading payloads."""
        out: list[str] = []
        cursor: Cursor | None = None
        while True:
            page, cursor = self._page(name, filter, cursor, DEFAULT_PAGE_SIZE, False)
            out.extend(r.id for r in page)
            if cursor is None:
                return out

    def _health(self) -> str:
        raise NotImplementedError

    def _close(self) -> None:
        return None

    def _reopen(self) -> None:
        """Forget what this process caches of the store (a following reader, after another process wrote)."""

    def _read_stamps(self) -> dict[str, str]:
        """Every collection's stamp (stamps.py); empty when nothing was stamped yet."""
        if self._describe(STAMPS) is None:
            return {}
        found: dict[str, str] = {}
        cursor: Cursor | None = None
        while True:
            page, cursor = self._page(STAMPS, None, cursor, DEFAULT_PAGE_SIZE, False)
            found.update(stamps_of(page))
            if cursor is None:
                return found

    def _stamp(self, name: str) -> None:
        self._internal_upsert(STAMPS, STAMPS_EMBEDDER, new_stamp(name))

    def _journal_write(self, entries: list[Record]) -> None:
        """Add ``entries``; every TRIM_EVERY seconds also delete the entries past RETENTION."""
        for start in range(0, len(entries), self.max_batch):
            self._internal_upsert(JOURNAL, JOURNAL_EMBEDDER, *entries[start : start + self.max_batch])
        now = time.monotonic()
        if now - self._trimmed >= TRIM_EVERY:
            self._trimmed = now
            self._delete_where(JOURNAL, Lt(AT_FIELD, time.time() - RETENTION))

    def _internal_upsert(self, name: str, embedder: str, *records: Record) -> None:
        """Upsert into one of the store's own small collections, creating it on first use."""
        if name not in self._internal_ready:
            if self._describe(name) is None:
                try:
                    self._create(name, CollectionInfo(dimension=1, distance="cosine", embedder=embedder))
                except Exception:
                    if self._describe(name) is None:  # not another writer's creation in between
                        raise
            self._internal_ready.add(name)
        try:
            self._upsert(name, list(records))
        except Exception:
            self._internal_ready.discard(name)  # dropped behind our back: create it again next time
            raise


def is_transport_error(exc: BaseException) -> bool:
    """Whether an exception (or one it was raised from) is the network's: a server that is down or slow."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, ConnectionError | TimeoutError) or type(current).__module__.startswith(
            ("httpx", "httpcore", "grpc")
        ):
            return True
        current = current.__cause__
    return False
