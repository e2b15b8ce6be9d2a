"""Chroma: embedded ``PersistentClient`` (the default store) or a Chroma server over HTTP.

Vectors are always computed by kubevec (no Chroma embedding function); the collection uses cosine
space, set explicitly, and records its dimension and embedder in the collection metadata.

Text conditions: Chroma's ``where_document`` cannot be OR-ed with metadata conditions and its
``$contains`` is case-sensitive substring matching. To give ``Contains`` the portable semantics
(whole words, case-insensitive) inside any ``And``/``Or``, each record also stores its distinct
lower-cased words in a hidden list field ``_words``; ``Contains`` becomes ``_words $contains word``.
The field is stripped from everything this backend returns.

Other writers: an embedded client keeps each collection's HNSW index in memory and never sees what
another process writes to the same directory (a search would keep returning deleted records), while
its ``get`` reads SQLite and is always current. A reader in a process of its own (``follow=True``:
``kubevec mcp``, the resident CLI) therefore reads the write stamps (stamps.py) before each
operation and reopens the client only when another process wrote. (Its files' modification times
cannot tell: opening a client touches ``chroma.sqlite3`` although nothing was written.)
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any, Final
from urllib.parse import urlsplit

import chromadb
import chromadb.errors
from chromadb.config import Settings as ChromaSettings

from kubevec.backends.base import BaseStore
from kubevec.backends.filters import And, Contains, Eq, Filter, Gt, Gte, In, Lt, Lte, Ne, Nin, Or, words
from kubevec.backends.paging import IdOrder
from kubevec.backends.protocol import CollectionInfo, Cursor
from kubevec.backends.records import Hit, MetadataValue, Record, cosine_distance_to_score
from kubevec.backends.stamps import STAMP_FIELD, STAMPS
from kubevec.core.errors import BackendError, BackendUnavailable, CollectionNotFound, InvalidFilter

logger = logging.getLogger(__name__)

WORDS_FIELD: Final = "_words"
#: Candidates the HNSW index visits per query (Chroma's default is 100, as many as the ranking asks for):
#: at 100 the index missed 2-5 of the 100 nearest of 329 documents, the nearest one included, and which
#: ones changed from one process to the next (Chroma builds the graph again on load); at 200 one process
#: in four still missed one; at 500 none of ten did. At 100,000 documents 500 finds 98% of the 100
#: nearest (200: 94%) for a few milliseconds more (docs/performance.md).
EF_SEARCH: Final = 500
_META_PREFIX: Final = "kubevec_"
_RANGE: Final = {Gt: "$gt", Gte: "$gte", Lt: "$lt", Lte: "$lte"}


def _settings() -> ChromaSettings:
    return ChromaSettings(anonymized_telemetry=False, allow_reset=False)


class ChromaStore(BaseStore):
    """A Chroma collection per kubevec collection; ``path`` for embedded, ``url`` for a server."""

    def __init__(
        self,
        *,
        path: str | None = None,
        url: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
        follow: bool = False,
    ) -> None:
        """``follow``: this process only reads an embedded store that another process writes."""
        if bool(path) == bool(url):
            raise BackendError("Chroma needs exactly one of a path (embedded) or a url (server)")
        location = f"{url}" if url else f"{path}"
        super().__init__(backend="chroma", location=location, follow=follow and path is not None)
        self._path = path
        self._url = url
        self._headers = headers or {}
        self._timeout = timeout
        # The embedded client needs no round trip; a server client connects at construction,
        # which would raise here, outside our error wrapping: connect lazily on the worker thread.
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self.max_batch = 1000
        self._order = IdOrder(self._ids)

    # -- connection ----------------------------------------------------------------------------

    def _connect(self) -> Any:
        if self._follow and not os.path.isdir(self._path or ""):  # deleted: opening would create an empty store
            self._release()
            raise BackendUnavailable(f"The Chroma store at {self._path} is gone")
        if self._client is None:
            if self._path is not None:
                self._client = chromadb.PersistentClient(path=self._path, settings=_settings())
            else:
                parts = urlsplit(self._url or "")
                if parts.scheme not in ("http", "https") or not parts.hostname:
                    raise BackendError(f"Invalid Chroma url {self._url!r}: expected http(s)://host:port")
                self._client = chromadb.HttpClient(
                    host=parts.hostname,
                    port=parts.port or (443 if parts.scheme == "https" else 8000),
                    ssl=parts.scheme == "https",
                    headers=self._headers,
                    settings=_settings(),
                )
            with contextlib.suppress(Exception):
                self.max_batch = max(1, min(self.max_batch, int(self._client.get_max_batch_size())))
        return self._client

    def _release(self) -> None:
        """Drop the client; the last one on a path stops chromadb's shared system, so the next opens afresh."""
        client, self._client = self._client, None
        self._collections.clear()
        if client is not None and hasattr(client, "close"):
            client.close()

    def _reopen(self) -> None:
        self._release()

    def _collection(self, name: str) -> Any:
        client = self._connect()
        collection = self._collections.get(name)
        if collection is None:
            collection = client.get_collection(name=name, embedding_function=None)
            self._collections[name] = collection
        return collection

    def _translate_error(self, exc: Exception) -> Exception:
        text = f"{type(exc).__name__}: {exc}"
        if self._url and _looks_unreachable(exc):
            return BackendUnavailable(f"Chroma at {self._url} is not reachable: {text}")
        if isinstance(exc, ValueError) and "where" in str(exc).lower():
            return InvalidFilter(f"Chroma rejected the filter: {exc}")
        if isinstance(exc, chromadb.errors.NotFoundError):
            return CollectionNotFound(f"Chroma at {self.location}: {exc}")
        return BackendError(f"Chroma at {self.location} failed: {text}")

    # -- hooks ---------------------------------------------------------------------------------

    def _read_stamps(self) -> dict[str, str]:
        """The stamps in one read of their small collection (one record per collection), through the handle
        kept until the next reopen: a following reader reads them before every operation, and the paged
        read (ids, then records by id, after looking the collection up) was most of a search's time at
        100,000 instance documents."""
        try:
            found = self._collection(STAMPS).get(include=["metadatas"])
            if not found["ids"]:  # dropped and made again behind the kept handle? look it up afresh
                self._collections.pop(STAMPS, None)
                found = self._collection(STAMPS).get(include=["metadatas"])
        except (chromadb.errors.NotFoundError, ValueError):
            self._collections.pop(STAMPS, None)
            return {}
        metadatas = found.get("metadatas") or []
        return {
            record_id: str((metadata or {}).get(STAMP_FIELD, ""))
            for record_id, metadata in zip(found["ids"], metadatas, strict=False)
        }

    def _describe(self, name: str) -> CollectionInfo | None:
        client = self._connect()
        try:
            collection = client.get_collection(name=name, embedding_function=None)
        except chromadb.errors.NotFoundError:
            self._collections.pop(name, None)
            return None
        except ValueError as exc:  # some versions raise ValueError for a missing collection
            if "does not exist" in str(exc):
                self._collections.pop(name, None)
                return None
            raise
        self._collections[name] = collection
        meta = collection.metadata or {}
        space = (collection.configuration or {}).get("hnsw", {}) or {}
        return CollectionInfo(
            dimension=int(meta.get(f"{_META_PREFIX}dimension", 0)),
            distance=str(space.get("space") or meta.get(f"{_META_PREFIX}distance", "")),
            embedder=str(meta.get(f"{_META_PREFIX}embedder", "")),
        )

    def _create(self, name: str, info: CollectionInfo) -> None:
        collection = self._connect().create_collection(
            name=name,
            configuration={"hnsw": {"space": info.distance, "ef_search": EF_SEARCH}},
            metadata={
                f"{_META_PREFIX}dimension": info.dimension,
                f"{_META_PREFIX}distance": info.distance,
                f"{_META_PREFIX}embedder": info.embedder,
            },
            embedding_function=None,
            get_or_create=True,
        )
        self._collections[name] = collection

    def _ensure_indexes(self, name: str, fields: tuple[str, ...]) -> None:
        """No payload indexes (Chroma filters without them); a collection made before :data:`EF_SEARCH`
        was set searches as broadly from now on (a configuration change: nothing is rebuilt)."""
        collection = self._collection(name)
        hnsw = (collection.configuration or {}).get("hnsw") or {}  # none: another index (SPANN) of its own
        if hnsw and int(hnsw.get("ef_search") or 0) < EF_SEARCH:
            try:
                collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
            except Exception as exc:  # a server that refuses it still searches as before: no reason to stop
                logger.warning("Kept the store's search breadth collection=%s error=%s", name, exc)
            self._collections.pop(name, None)

    def _drop(self, name: str) -> None:
        """Delete the records, then the collection. Chroma's ``delete_collection`` leaves list-valued
        metadata behind, keyed by an internal row id that the next record written (in any collection)
        reuses, which then reads another object's labels (chroma-core/chroma#7594, open in 1.5);
        deleting by id removes them. Found by the store contract on a shared server."""
        self._collections.pop(name, None)
        try:
            collection = self._connect().get_collection(name=name, embedding_function=None)
        except (chromadb.errors.NotFoundError, ValueError):
            return
        while ids := collection.get(limit=self.max_batch, include=[])["ids"]:
            collection.delete(ids=ids)
        try:
            self._connect().delete_collection(name=name)
        except (chromadb.errors.NotFoundError, ValueError):
            return

    def _upsert(self, name: str, records: list[Record]) -> None:
        """Chroma's upsert *merges* an existing record's metadata: a key the new record lacks (a health
        reason that cleared, a warning whose Event went) would outlive it. Those keys are read first and
        written as None, which is how Chroma removes a key."""
        collection = self._collection(name)
        metadatas = [_to_chroma_metadata(r) for r in records]
        existing = collection.get(ids=[r.id for r in records], include=["metadatas"])
        before = dict(zip(existing["ids"], existing.get("metadatas") or [], strict=False))
        for record, metadata in zip(records, metadatas, strict=True):
            for key in set(before.get(record.id) or {}) - set(metadata):
                metadata[key] = None
        collection.upsert(
            ids=[r.id for r in records],
            embeddings=[r.vector for r in records],
            documents=[r.text for r in records],
            metadatas=metadatas,
        )

    def _delete(self, name: str, ids: list[str]) -> None:
        if ids:
            self._collection(name).delete(ids=ids)

    def _delete_where(self, name: str, filter: Filter) -> None:
        self._collection(name).delete(where=translate(filter))

    def _get(self, name: str, ids: list[str], include_vectors: bool) -> list[Record]:
        include = ["documents", "metadatas", *(["embeddings"] if include_vectors else [])]
        result = self._collection(name).get(ids=ids, include=include)
        return _records(result, with_vectors=include_vectors, with_text=True)

    def _sample(self, name: str, limit: int) -> list[Record] | None:
        # the first rows Chroma holds, in one read: paging in id order reads every id first (0.3 s at 100,000)
        return _records(
            self._collection(name).get(limit=limit, include=["embeddings"]), with_vectors=True, with_text=False
        )

    def _count(self, name: str, filter: Filter | None) -> int:
        if filter is None:
            return int(self._collection(name).count())
        return len(self._ids(name, filter))

    def _page(
        self, name: str, filter: Filter | None, cursor: Cursor | None, limit: int, with_text: bool
    ) -> tuple[list[Record], Cursor | None]:
        """In id order (backends/paging.py): Chroma's offset paging rescans every row before the offset."""
        ids, after = self._order.page(name, filter, cursor, limit)
        if not ids:
            return [], after
        include = ["metadatas", *(["documents"] if with_text else [])]
        found = _records(self._collection(name).get(ids=ids, include=include), with_vectors=False, with_text=with_text)
        by_id = {record.id: record for record in found}
        return [by_id[i] for i in ids if i in by_id], after

    def _text_page(self, name: str, cursor: Cursor | None, limit: int) -> tuple[list[tuple[str, str]], Cursor | None]:
        ids, after = self._order.page(name, None, cursor, limit)
        if not ids:
            return [], after
        result = self._collection(name).get(ids=ids, include=["documents"])
        texts = dict(zip(result["ids"], result["documents"] or [], strict=True))
        return [(i, texts[i] or "") for i in ids if i in texts], after

    def _ids(self, name: str, filter: Filter | None) -> list[str]:
        # One call: ids alone are small, and offset paging costs Chroma a rescan per page.
        where = translate(filter) if filter is not None else None
        return list(self._collection(name).get(where=where, include=[])["ids"])

    def _search(self, name: str, vector: list[float], k: int, filter: Filter | None) -> list[Hit]:
        collection = self._collection(name)
        result = collection.query(
            query_embeddings=[vector],
            n_results=k,
            where=translate(filter) if filter is not None else None,
            include=["documents", "metadatas", "distances"],
        )
        ids = result["ids"][0] if result["ids"] else []
        hits = []
        for index, record_id in enumerate(ids):
            hits.append(
                Hit(
                    id=record_id,
                    score=cosine_distance_to_score(float(result["distances"][0][index])),
                    text=result["documents"][0][index] or "",
                    metadata=_from_chroma_metadata(result["metadatas"][0][index]),
                )
            )
        return hits

    def _health(self) -> str:
        client = self._connect()
        client.heartbeat()
        return f"chroma at {self.location}: {len(client.list_collections())} collections"

    def _close(self) -> None:
        if self._follow:
            self._release()
        self._collections.clear()
        self._client = None


# -- translation -----------------------------------------------------------------------------------


def translate(node: Filter) -> dict[str, Any]:
    """Portable filter -> Chroma ``where`` (see the module docstring for ``Contains``)."""
    if isinstance(node, Eq):
        return _any_of([{node.field: {"$eq": node.value}}, {node.field: {"$contains": node.value}}])
    if isinstance(node, Ne):
        return _all_of([{node.field: {"$ne": node.value}}, {node.field: {"$not_contains": node.value}}])
    if isinstance(node, In):
        return _any_of(
            [{node.field: {"$in": list(node.values)}}, *({node.field: {"$contains": v}} for v in node.values)]
        )
    if isinstance(node, Nin):
        return _all_of(
            [{node.field: {"$nin": list(node.values)}}, *({node.field: {"$not_contains": v}} for v in node.values)]
        )
    if isinstance(node, Gt | Gte | Lt | Lte):
        return {node.field: {_RANGE[type(node)]: node.value}}
    if isinstance(node, Contains):
        return _all_of([{WORDS_FIELD: {"$contains": word}} for word in dict.fromkeys(words(node.text))])
    if isinstance(node, And):
        return _all_of([translate(child) for child in node.filters])
    if isinstance(node, Or):
        return _any_of([translate(child) for child in node.filters])
    raise InvalidFilter(f"Cannot translate {node!r} for Chroma")


def _all_of(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return parts[0] if len(parts) == 1 else {"$and": parts}


def _any_of(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return parts[0] if len(parts) == 1 else {"$or": parts}


def _to_chroma_metadata(record: Record) -> dict[str, Any]:
    metadata: dict[str, Any] = dict(record.metadata)  # empty lists were dropped by the base class
    found = sorted(set(words(record.text)))
    if found:
        metadata[WORDS_FIELD] = found
    return metadata


def _from_chroma_metadata(metadata: Any) -> dict[str, MetadataValue]:
    return {k: v for k, v in (metadata or {}).items() if k != WORDS_FIELD}


def _records(result: Any, *, with_vectors: bool, with_text: bool) -> list[Record]:
    ids = result["ids"]
    metadatas = result.get("metadatas") or [None] * len(ids)
    documents = result.get("documents") if with_text else None
    embeddings = result.get("embeddings") if with_vectors else None
    records = []
    for index, record_id in enumerate(ids):
        records.append(
            Record(
                id=record_id,
                vector=[float(x) for x in embeddings[index]] if embeddings is not None else [],
                text=(documents[index] or "") if documents is not None else "",
                metadata=_from_chroma_metadata(metadatas[index]),
            )
        )
    return records


def _looks_unreachable(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = type(current).__name__
        if isinstance(current, ConnectionError | TimeoutError | OSError) or name in (
            "ConnectError",
            "ConnectTimeout",
            "ReadTimeout",
            "RemoteProtocolError",
            "ReadError",
        ):
            return True
        if "Could not connect" in str(current) or "Connection refused" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False
