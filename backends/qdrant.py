"""Qdrant: a server (``url`` + ``api_key``) or local mode (``path`` or ``":memory:"``), one code path.

Point ids are UUIDv5 of our document id (Qdrant accepts only UUIDs or integers); the document id
and text are kept in the payload as ``id`` and ``text``, next to the metadata fields. Against a
server, payload indexes are created for the filterable fields and a word full-text index on
``text`` (so ``Contains`` keeps its whole-word, case-insensitive meaning); local mode builds no
indexes and implements the same matching itself.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from kubevec.backends.base import BaseStore, is_transport_error
from kubevec.backends.filters import And, Contains, Eq, Filter, Gt, Gte, In, Lt, Lte, Ne, Nin, Or
from kubevec.backends.protocol import DEFAULT_PAGE_SIZE, CollectionInfo, Cursor
from kubevec.backends.records import Hit, MetadataValue, Record, similarity_to_score
from kubevec.core.errors import BackendError, BackendUnavailable, CollectionNotFound, InvalidFilter

#: Namespace for point ids: uuid5(NAMESPACE, document id). Never change it: ids would all move.
POINT_NAMESPACE: Final = uuid.UUID("6f1d9a4e-6a53-5a4b-9b0e-6b75626576ec")
ID_FIELD: Final = "id"
TEXT_FIELD: Final = "text"
_META_PREFIX: Final = "kubevec_"


def point_id(document_id: str) -> str:
    return str(uuid.uuid5(POINT_NAMESPACE, document_id))


class QdrantStore(BaseStore):
    """A Qdrant collection per kubevec collection."""

    max_batch = 256

    def __init__(
        self,
        *,
        url: str | None = None,
        api_key: str | None = None,
        path: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        if url and path:
            raise BackendError("Qdrant takes a url (server) or a path (local mode), not both")
        location = url or path or ":memory:"
        super().__init__(backend="qdrant", location=location)
        self._server = bool(url)
        self._url = url
        self._api_key = api_key
        self._path = path
        self._timeout = timeout
        self._client: QdrantClient | None = None

    def _connect(self) -> QdrantClient:
        if self._client is None:
            if self._url:
                self._client = QdrantClient(
                    url=self._url, api_key=self._api_key, timeout=int(self._timeout), check_compatibility=False
                )
            elif self._path and self._path != ":memory:":
                self._client = QdrantClient(path=self._path)
            else:
                self._client = QdrantClient(location=":memory:")
        return self._client

    def _translate_error(self, exc: Exception) -> Exception:
        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, ResponseHandlingException) or is_transport_error(exc):
            return BackendUnavailable(f"Qdrant at {self.location} is not reachable: {text}")
        if isinstance(exc, UnexpectedResponse):
            if exc.status_code == 404:
                return CollectionNotFound(f"Qdrant at {self.location}: {exc}")
            if exc.status_code is not None and exc.status_code >= 500:
                return BackendUnavailable(f"Qdrant at {self.location} is failing (HTTP {exc.status_code}): {exc}")
            return BackendError(f"Qdrant at {self.location} refused the request (HTTP {exc.status_code}): {exc}")
        return BackendError(f"Qdrant at {self.location} failed: {text}")

    # -- hooks ---------------------------------------------------------------------------------

    def _describe(self, name: str) -> CollectionInfo | None:
        client = self._connect()
        if not client.collection_exists(name):
            return None
        info = client.get_collection(name)
        vectors = info.config.params.vectors
        if not isinstance(vectors, models.VectorParams):
            raise BackendError(f"Qdrant collection {name!r} uses named vectors; it was not created by kubevec")
        meta = info.config.metadata or {}
        return CollectionInfo(
            dimension=int(vectors.size),
            distance=str(vectors.distance.value).lower(),
            embedder=str(meta.get(f"{_META_PREFIX}embedder", "")),
        )

    def _create(self, name: str, info: CollectionInfo) -> None:
        client = self._connect()
        client.create_collection(
            collection_name=name,
            vectors_config=models.VectorParams(size=info.dimension, distance=models.Distance.COSINE),
            metadata={f"{_META_PREFIX}embedder": info.embedder, f"{_META_PREFIX}dimension": info.dimension},
        )

    def _ensure_indexes(self, name: str, fields: tuple[str, ...]) -> None:
        """On a server, create the missing payload indexes: the caller's keyword fields, the id, the text.

        Local mode has no payload indexes (filters scan), so there is nothing to create.
        """
        if not self._server:
            return
        client = self._connect()
        present = set(client.get_collection(name).payload_schema or {})
        for field in (*fields, ID_FIELD):
            if field not in present:
                client.create_payload_index(name, field_name=field, field_schema=models.PayloadSchemaType.KEYWORD)
        if TEXT_FIELD not in present:
            client.create_payload_index(
                name,
                field_name=TEXT_FIELD,
                field_schema=models.TextIndexParams(
                    type=models.TextIndexType.TEXT, tokenizer=models.TokenizerType.WORD, lowercase=True
                ),
            )

    def _drop(self, name: str) -> None:
        client = self._connect()
        if client.collection_exists(name):
            client.delete_collection(name)

    def _upsert(self, name: str, records: list[Record]) -> None:
        points = [
            models.PointStruct(
                id=point_id(r.id),
                vector=list(r.vector),
                payload={**r.metadata, ID_FIELD: r.id, TEXT_FIELD: r.text},
            )
            for r in records
        ]
        self._connect().upsert(collection_name=name, points=points, wait=True)

    def _delete(self, name: str, ids: list[str]) -> None:
        if ids:
            self._connect().delete(
                collection_name=name,
                points_selector=models.PointIdsList(points=[point_id(i) for i in ids]),
                wait=True,
            )

    def _delete_where(self, name: str, filter: Filter) -> None:
        self._connect().delete(
            collection_name=name, points_selector=models.FilterSelector(filter=translate(filter)), wait=True
        )

    def _get(self, name: str, ids: list[str], include_vectors: bool) -> list[Record]:
        points = self._connect().retrieve(
            collection_name=name, ids=[point_id(i) for i in ids], with_payload=True, with_vectors=include_vectors
        )
        return [_record(p, with_text=True) for p in points]

    def _count(self, name: str, filter: Filter | None) -> int:
        result = self._connect().count(
            collection_name=name, count_filter=translate(filter) if filter is not None else None, exact=True
        )
        return int(result.count)

    def _page(
        self, name: str, filter: Filter | None, cursor: Cursor | None, limit: int, with_text: bool
    ) -> tuple[list[Record], Cursor | None]:
        payload: bool | models.PayloadSelectorExclude = (
            True if with_text else models.PayloadSelectorExclude(exclude=[TEXT_FIELD])
        )
        points, next_offset = self._connect().scroll(
            collection_name=name,
            scroll_filter=translate(filter) if filter is not None else None,
            limit=limit,
            offset=cursor,
            with_payload=payload,
            with_vectors=False,
        )
        next_cursor: Cursor | None = None if next_offset is None else str(next_offset)
        return [_record(p, with_text=with_text) for p in points], next_cursor

    def _ids(self, name: str, filter: Filter | None) -> list[str]:
        out: list[str] = []
        cursor: Any = None
        while True:
            points, cursor = self._connect().scroll(
                collection_name=name,
                scroll_filter=translate(filter) if filter is not None else None,
                limit=DEFAULT_PAGE_SIZE,
                offset=cursor,
                with_payload=models.PayloadSelectorInclude(include=[ID_FIELD]),
                with_vectors=False,
            )
            out.extend(str((p.payload or {}).get(ID_FIELD, p.id)) for p in points)
            if cursor is None:
                return out

    def _search(self, name: str, vector: list[float], k: int, filter: Filter | None) -> list[Hit]:
        response = self._connect().query_points(
            collection_name=name,
            query=vector,
            limit=k,
            query_filter=translate(filter) if filter is not None else None,
            with_payload=True,
            with_vectors=False,
        )
        hits = []
        for point in response.points:
            record = _record(point, with_text=True)
            hits.append(
                Hit(
                    id=record.id,
                    score=similarity_to_score(float(point.score)),
                    text=record.text,
                    metadata=record.metadata,
                )
            )
        return hits

    def _health(self) -> str:
        collections = self._connect().get_collections().collections
        return f"qdrant at {self.location}: {len(collections)} collections"

    def _close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


# -- translation -----------------------------------------------------------------------------------


def translate(node: Filter) -> models.Filter:
    """Portable filter -> ``models.Filter``; nested And/Or become nested filters, never dropped."""
    condition = _condition(node)
    return condition if isinstance(condition, models.Filter) else models.Filter(must=[condition])


def _condition(node: Filter) -> models.FieldCondition | models.Filter:
    if isinstance(node, Eq):
        return _eq(node.field, node.value)
    if isinstance(node, Ne):
        return models.Filter(must_not=[_eq(node.field, node.value)])
    if isinstance(node, In):
        return _in(node.field, node.values)
    if isinstance(node, Nin):
        return models.Filter(must_not=[_in(node.field, node.values)])
    if isinstance(node, Gt):
        return models.FieldCondition(key=node.field, range=models.Range(gt=node.value))
    if isinstance(node, Gte):
        return models.FieldCondition(key=node.field, range=models.Range(gte=node.value))
    if isinstance(node, Lt):
        return models.FieldCondition(key=node.field, range=models.Range(lt=node.value))
    if isinstance(node, Lte):
        return models.FieldCondition(key=node.field, range=models.Range(lte=node.value))
    if isinstance(node, Contains):
        return models.FieldCondition(key=TEXT_FIELD, match=models.MatchText(text=node.text))
    if isinstance(node, And):
        return models.Filter(must=[_condition(child) for child in node.filters])
    if isinstance(node, Or):
        return models.Filter(should=[_condition(child) for child in node.filters])
    raise InvalidFilter(f"Cannot translate {node!r} for Qdrant")


def _eq(field: str, value: Any) -> models.FieldCondition:
    if isinstance(value, float) and not isinstance(value, bool):
        return models.FieldCondition(key=field, range=models.Range(gte=value, lte=value))
    return models.FieldCondition(key=field, match=models.MatchValue(value=value))


def _in(field: str, values: tuple[Any, ...]) -> models.FieldCondition | models.Filter:
    if all(isinstance(v, str) for v in values) or all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return models.FieldCondition(key=field, match=models.MatchAny(any=list(values)))
    return models.Filter(should=[_eq(field, v) for v in values])


def _record(point: Any, *, with_text: bool) -> Record:
    payload: dict[str, Any] = dict(point.payload or {})
    record_id = str(payload.pop(ID_FIELD, point.id))
    text = str(payload.pop(TEXT_FIELD, "")) if with_text else ""
    payload.pop(TEXT_FIELD, None)
    vector = point.vector if isinstance(getattr(point, "vector", None), list) else []
    metadata: dict[str, MetadataValue] = payload
    return Record(id=record_id, vector=[float(x) for x in vector], text=text, metadata=metadata)
