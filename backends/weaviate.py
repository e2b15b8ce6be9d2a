"""Weaviate: a server (REST + gRPC, the official v4 client), a Weaviate collection per kubevec collection.

Vectors are ours (``self_provided``, cosine HNSW). Object ids are UUIDv5 of our document ids (Weaviate
takes only UUIDs); the document id is the ``doc_id`` property, the text ``text``, the payload as JSON
``payload`` (neither filterable nor searchable: what records are read back from), the text's words
``words`` (field tokenization, so ``Contains`` keeps its whole-word meaning). Payload fields get
typed properties as they first appear: their strings, numbers and booleans as arrays (a scalar is
an array of one), a scalar number also as ``ns_`` for ranges; ``lists`` names the fields a record
holds as lists. Property and collection names are hex of ours (Weaviate's names are restricted), so
no field name is interpreted; values travel as typed filter values through the client, never as
text. Searches, counts and deletes filter on the server; listings go through the cursor API, which
takes no filter, so a listing's filter is applied here (the reference semantics, ``matches``).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import urlparse

import weaviate
import weaviate.connect.v4
import weaviate.retry
from weaviate.classes.config import Configure, ConsistencyLevel, DataType, Property, Tokenization, VectorDistances
from weaviate.classes.data import DataObject
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.classes.query import Filter as W
from weaviate.classes.query import MetadataQuery
from weaviate.exceptions import (
    UnexpectedStatusCodeError,
    WeaviateBaseError,
    WeaviateConnectionError,
    WeaviateQueryError,
)

from kubevec.backends.base import BaseStore, is_transport_error
from kubevec.backends.filters import And, Contains, Eq, Filter, Gt, Gte, In, Lt, Lte, Ne, Nin, Or, matches, words
from kubevec.backends.payload import BOOLS, NUMBERS, STRINGS, kind_of, list_fields, typed
from kubevec.backends.protocol import CollectionInfo, Cursor
from kubevec.backends.records import Hit, MetadataValue, Record, cosine_distance_to_score
from kubevec.core.errors import BackendError, BackendUnavailable, CollectionNotFound, InvalidFilter

#: Namespace for object ids: uuid5(NAMESPACE, document id). Never change it: ids would all move.
OBJECT_NAMESPACE: Final = uuid.UUID("2b6f7c1e-4f0b-5b8e-9a43-6b7562657677")
#: An id no object has: the filter that matches nothing (a field no record holds).
_NOTHING: Final = uuid.UUID(int=0)
DOC_ID, TEXT, PAYLOAD, WORDS, LISTS = "doc_id", "text", "payload", "words", "lists"
_STRINGS, _NUMBERS, _BOOLS, _SCALAR = STRINGS, NUMBERS, BOOLS, "ns"
_TYPES: Final = {
    _STRINGS: DataType.TEXT_ARRAY,
    _NUMBERS: DataType.NUMBER_ARRAY,
    _BOOLS: DataType.BOOL_ARRAY,
    _SCALAR: DataType.NUMBER,
}
_PREFIX: Final = "Kubevec_"


class _FailFast(weaviate.retry._Retry):
    """The client retries gRPC calls itself, 1 + 2 + 4 + 8 + 16 s: a flush to a server that is down would
    hang for half a minute before the engine knew. One retry after a second; the engine's own backoff
    does the rest (as for every other store)."""

    def __init__(self, n: float = 1) -> None:
        super().__init__(min(n, 1))


# The one place kubevec touches the client's private API (``weaviate.connect.v4`` builds a _Retry per call).
weaviate.connect.v4._Retry = _FailFast  # type: ignore[attr-defined]


def object_id(document_id: str) -> uuid.UUID:
    return uuid.uuid5(OBJECT_NAMESPACE, document_id)


def collection_name(name: str) -> str:
    """Ours in Weaviate's alphabet (a capital first, then letters, digits, ``_``): ``Kubevec_<hex>``."""
    return f"{_PREFIX}{name.encode().hex()}"


def prop(field: str, kind: str) -> str:
    return f"{kind}_{field.encode().hex()}"


class WeaviateStore(BaseStore):
    """A Weaviate collection per kubevec collection."""

    max_batch = 500

    def __init__(
        self,
        *,
        url: str,
        grpc_port: int = 50051,
        api_key: str | None = None,
        consistency: str = "QUORUM",
        replication_factor: int = 1,
        timeout: float = 30.0,
    ) -> None:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise BackendError(f"The weaviate backend needs an http(s) url, e.g. http://weaviate:8080, got {url!r}")
        super().__init__(backend="weaviate", location=f"{parsed.scheme}://{parsed.hostname}:{parsed.port or ''}")
        self._host = parsed.hostname
        self._secure = parsed.scheme == "https"
        self._port = parsed.port or (443 if self._secure else 80)
        self._grpc_port = grpc_port
        self._api_key = api_key
        self._consistency = ConsistencyLevel(consistency)
        self._replication_factor = replication_factor
        self._timeout = timeout
        self._client: Any = None
        self._properties: dict[str, set[str]] = {}

    def _connect(self) -> Any:
        if self._client is None:
            client = weaviate.connect_to_custom(
                http_host=self._host,
                http_port=self._port,
                http_secure=self._secure,
                grpc_host=self._host,
                grpc_port=self._grpc_port,
                grpc_secure=self._secure,
                auth_credentials=Auth.api_key(self._api_key) if self._api_key else None,
                additional_config=AdditionalConfig(
                    timeout=Timeout(init=self._timeout, query=self._timeout, insert=self._timeout)
                ),
                # The init checks also ask pypi.org for the client's latest version: nothing here may
                # reach the internet. Reachability shows on the first call (and in health()).
                skip_init_checks=True,
            )
            self._client = client
        return self._client

    def _collection(self, name: str) -> Any:
        return self._connect().collections.use(collection_name(name)).with_consistency_level(self._consistency)

    def _translate_error(self, exc: Exception) -> Exception:
        text = f"{type(exc).__name__}: {' '.join(str(exc).split())}"  # the client's messages span lines
        if isinstance(exc, WeaviateConnectionError) or is_transport_error(exc):
            self._close()
            return BackendUnavailable(f"Weaviate at {self.location} is not reachable: {text}")
        if isinstance(exc, UnexpectedStatusCodeError):
            if exc.status_code == 404:
                self._properties.clear()
                return CollectionNotFound(f"Weaviate at {self.location}: {text}")
            if exc.status_code in (401, 403):
                return BackendError(f"Weaviate at {self.location} refused the credentials (HTTP {exc.status_code})")
            if exc.status_code >= 500:
                return BackendUnavailable(f"Weaviate at {self.location} is failing (HTTP {exc.status_code}): {text}")
        if isinstance(exc, WeaviateQueryError) and "could not find class" in str(exc).lower():
            self._properties.clear()
            return CollectionNotFound(f"Weaviate at {self.location}: {text}")
        if isinstance(exc, WeaviateBaseError) and ("unavailable" in str(exc).lower() or "connect" in str(exc).lower()):
            self._close()
            return BackendUnavailable(f"Weaviate at {self.location} is not reachable: {text}")
        return BackendError(f"Weaviate at {self.location} failed: {text}")

    # -- hooks ---------------------------------------------------------------------------------

    def _describe(self, name: str) -> CollectionInfo | None:
        client = self._connect()
        if not client.collections.exists(collection_name(name)):
            self._properties.pop(name, None)
            return None
        config = client.collections.use(collection_name(name)).config.get()
        try:
            info = json.loads(config.description or "")
            return CollectionInfo(dimension=int(info["dimension"]), distance="cosine", embedder=str(info["embedder"]))
        except (ValueError, KeyError, TypeError):
            raise BackendError(f"Weaviate collection {collection_name(name)!r} was not created by kubevec") from None

    def _create(self, name: str, info: CollectionInfo) -> None:
        self._connect().collections.create(
            collection_name(name),
            description=json.dumps({"kubevec": name, "dimension": info.dimension, "embedder": info.embedder}),
            vector_config=Configure.Vectors.self_provided(
                vector_index_config=Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)
            ),
            replication_config=Configure.replication(factor=self._replication_factor),
            properties=[
                Property(name=DOC_ID, data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
                Property(name=TEXT, data_type=DataType.TEXT, tokenization=Tokenization.WORD, index_filterable=False),
                Property(name=PAYLOAD, data_type=DataType.TEXT, index_filterable=False, index_searchable=False),
                Property(name=WORDS, data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.FIELD),
                Property(name=LISTS, data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.FIELD),
            ],
        )
        self._properties.pop(name, None)

    def _drop(self, name: str) -> None:
        self._properties.pop(name, None)
        client = self._connect()
        if client.collections.exists(collection_name(name)):
            client.collections.delete(collection_name(name))

    def _known(self, name: str, *, fresh: bool = False) -> set[str]:
        """The collection's property names, cached; ``fresh`` reads them again (another process, the
        controller or a second replica, may have added some since)."""
        known = self._properties.get(name)
        if known is None or fresh:
            config = self._connect().collections.use(collection_name(name)).config.get()
            known = {p.name for p in config.properties}
            self._properties[name] = known
        return known

    def _upsert(self, name: str, records: list[Record]) -> None:
        rows = [(record, _properties(record)) for record in records]
        needed = {key for _, properties in rows for key in properties}
        known = self._known(name)
        if needed - known:
            known = self._known(name, fresh=True)
        collection = self._connect().collections.use(collection_name(name))
        for key in sorted(needed - known):
            kind = key.split("_", 1)[0]
            tokenization = Tokenization.FIELD if kind == _STRINGS else None
            try:
                collection.config.add_property(Property(name=key, data_type=_TYPES[kind], tokenization=tokenization))
            except WeaviateBaseError:
                if key not in self._known(name, fresh=True):  # not added by another writer meanwhile
                    raise
            known.add(key)
        objects = [
            DataObject(properties=properties, vector=[float(x) for x in record.vector], uuid=object_id(record.id))
            for record, properties in rows
        ]
        result = self._collection(name).data.insert_many(objects)
        if result.errors:
            first = next(iter(result.errors.values()))
            raise BackendError(f"Weaviate at {self.location} refused {len(result.errors)} records: {first.message}")

    def _delete(self, name: str, ids: list[str]) -> None:
        if ids:
            self._collection(name).data.delete_many(where=W.by_id().contains_any([object_id(i) for i in ids]))

    def _delete_where(self, name: str, filter: Filter) -> None:
        self._collection(name).data.delete_many(where=self._filter(name, filter))

    def _get(self, name: str, ids: list[str], include_vectors: bool) -> list[Record]:
        if not ids:
            return []
        response = self._collection(name).query.fetch_objects(
            filters=W.by_id().contains_any([object_id(i) for i in ids]),
            limit=len(ids),
            include_vector=include_vectors,
            return_properties=[DOC_ID, TEXT, PAYLOAD],
        )
        return [_record(o, with_text=True) for o in response.objects]

    def _count(self, name: str, filter: Filter | None) -> int:
        where = self._filter(name, filter) if filter is not None else None
        result = self._collection(name).aggregate.over_all(filters=where, total_count=True)
        return int(result.total_count or 0)

    def _page(
        self, name: str, filter: Filter | None, cursor: Cursor | None, limit: int, with_text: bool
    ) -> tuple[list[Record], Cursor | None]:
        """Objects in id (UUID) order through the cursor API, the filter applied here: Weaviate's cursor takes
        no filter, and a filtered, sorted fetch with a limit sorts only the objects it happened to take
        (a page of 17 over 48 matches lost 16 of them)."""
        out: list[Record] = []
        after = str(cursor) if cursor is not None else None
        properties = [DOC_ID, PAYLOAD, *([TEXT] if with_text or filter is not None else [])]
        while len(out) < limit:
            response = self._collection(name).query.fetch_objects(
                limit=max(limit, 100), after=after, return_properties=properties
            )
            if not response.objects:
                return out, None
            for o in response.objects:
                after = str(o.uuid)
                record = _record(o, with_text=True)
                if filter is None or matches(filter, text=record.text, metadata=record.metadata):
                    out.append(record if with_text else dataclasses.replace(record, text=""))
                    if len(out) == limit:
                        return out, after
        return out, after

    def _search(self, name: str, vector: list[float], k: int, filter: Filter | None) -> list[Hit]:
        response = self._collection(name).query.near_vector(
            near_vector=[float(x) for x in vector],
            limit=k,
            filters=self._filter(name, filter) if filter is not None else None,
            return_metadata=MetadataQuery(distance=True),
            return_properties=[DOC_ID, TEXT, PAYLOAD],
        )
        hits = []
        for o in response.objects:
            record = _record(o, with_text=True)
            distance = float(o.metadata.distance or 0.0)
            hits.append(
                Hit(id=record.id, score=cosine_distance_to_score(distance), text=record.text, metadata=record.metadata)
            )
        return hits

    def _health(self) -> str:
        client = self._connect()
        if not client.is_ready():
            raise ConnectionError("not ready")
        return f"weaviate at {self.location}: {client.get_meta().get('version', '?')}"

    def _close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

    # -- filters -------------------------------------------------------------------------------

    def _filter(self, name: str, node: Filter) -> Any:
        """A field this process has not seen may have been added by another (a reader beside the
        controller): the properties are read again once before a filter on it matches nothing."""
        translator = _Translator(self._known(name))
        translated = translator.filter(node)
        if translator.missed:
            translator = _Translator(self._known(name, fresh=True))
            translated = translator.filter(node)
        return translated


class _Translator:
    """Portable filter -> Weaviate filters over the typed properties that exist (a missing one matches nothing)."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.missed = False  # a property the filter names is not known

    def filter(self, node: Filter) -> Any:
        if isinstance(node, Eq):
            return self._eq(node.field, node.value)
        if isinstance(node, Ne):
            return W.not_(self._eq(node.field, node.value))
        if isinstance(node, In):
            return self._any(node.field, node.values)
        if isinstance(node, Nin):
            return W.not_(self._any(node.field, node.values))
        if isinstance(node, Gt | Gte | Lt | Lte):
            name = prop(node.field, _SCALAR)
            if name not in self.known:
                self.missed = True
                return _nothing()
            condition = W.by_property(name)
            value = float(node.value)
            if isinstance(node, Gt):
                return condition.greater_than(value)
            if isinstance(node, Gte):
                return condition.greater_or_equal(value)
            if isinstance(node, Lt):
                return condition.less_than(value)
            return condition.less_or_equal(value)
        if isinstance(node, Contains):
            found = list(dict.fromkeys(words(node.text)))
            return W.by_property(WORDS).contains_all(found) if found else W.not_(_nothing())
        if isinstance(node, And):
            return W.all_of([self.filter(child) for child in node.filters])
        if isinstance(node, Or):
            return W.any_of([self.filter(child) for child in node.filters])
        raise InvalidFilter(f"Cannot translate {node!r} for Weaviate")

    def _eq(self, field: str, value: str | float | bool) -> Any:
        kind = kind_of(value)
        name = prop(field, kind)
        if name not in self.known:
            self.missed = True
            return _nothing()
        typed: Any = float(value) if kind == _NUMBERS else value
        return W.by_property(name).contains_any([typed])

    def _any(self, field: str, values: Iterable[str | float | bool]) -> Any:
        parts = [self._eq(field, value) for value in values]
        return W.any_of(parts) if len(parts) > 1 else parts[0] if parts else _nothing()


def _nothing() -> Any:
    return W.by_id().equal(_NOTHING)


def _properties(record: Record) -> dict[str, Any]:
    out: dict[str, Any] = {
        DOC_ID: record.id,
        TEXT: record.text,
        PAYLOAD: json.dumps(dict(record.metadata), ensure_ascii=False, separators=(",", ":")),
        WORDS: sorted(set(words(record.text))),
        LISTS: list_fields(record.metadata),
    }
    for (field, kind), values in typed(record.metadata).items():
        out[prop(field, kind)] = values
    for field, value in record.metadata.items():
        if not isinstance(value, list) and kind_of(value) == NUMBERS:
            out[prop(field, _SCALAR)] = float(value)
    return out


def _record(o: Any, *, with_text: bool) -> Record:
    properties = o.properties or {}
    payload: dict[str, MetadataValue] = json.loads(properties.get(PAYLOAD) or "{}")
    vector = o.vector.get("default") if isinstance(o.vector, dict) else o.vector
    return Record(
        id=str(properties.get(DOC_ID, "")),
        vector=[float(x) for x in vector] if vector else [],
        text=str(properties.get(TEXT) or "") if with_text else "",
        metadata=payload,
    )
