"""Redis 8 vector sets: one vector set per kubevec collection, the payloads beside it.

Keys of a collection ``name`` share a hash tag (``{name}``), so a Redis Cluster keeps them in one slot
and one transaction writes them together:

- ``<prefix>{name}:info``: a hash with the dimension, distance and embedder: the collection exists
  while it does (a vector set disappears with its last element);
- ``<prefix>{name}:vec``: the vector set (elements are document ids), fp32 (``NOQUANT``: the vectors
  read back are the ones written, which the engine re-uses when only metadata changed), ``M`` 16;
- ``<prefix>{name}:doc``: a hash, id -> the document's text and payload as JSON;
- ``<prefix>{name}:ids``: a sorted set of the ids, for listings in id order with a cursor.

Filters run on the server as vector-set ``FILTER`` expressions over each element's attributes: ``_t``,
one token per payload value (a hash of the field and the typed value, so ``Eq`` on a list is
membership, ``True`` is not ``1``, and nothing a caller sends is ever parsed as an expression), ``_w``,
the text's words hashed the same way (``Contains``), and every scalar number under ``n_<hex of the
field>`` for ranges. A selector on a field a record lacks makes Redis skip the record whatever else the
expression says, so a numeric comparison is exact only where every enclosing filter is an ``And``;
anywhere else (inside an ``Or``) a vector search refuses the filter with an error that says so, and
listings and counts, which need no vector, evaluate it here on the payloads instead (exactly).
"""

from __future__ import annotations

import decimal
import hashlib
import json
import struct
from collections.abc import Iterable, Sequence
from typing import Any, Final

import redis
import redis.exceptions
from redis.connection import parse_url

from kubevec.backends.base import BaseStore, is_transport_error
from kubevec.backends.filters import And, Contains, Eq, Filter, Gt, Gte, In, Lt, Lte, Ne, Nin, matches, words
from kubevec.backends.payload import NUMBERS, kind_of
from kubevec.backends.protocol import CollectionInfo, Cursor
from kubevec.backends.records import Hit, Record
from kubevec.core.errors import BackendError, BackendUnavailable, CollectionNotFound, InvalidFilter

#: Graph links per node (Redis's default). Measured on the shared corpus's 88 questions: fp32 at M 16 gives
#: Chroma's dense top-5 for 88 of 88 (4.9 KB a record in the vector set, attributes included), M 32 the
#: same at 5.2 KB, int8 (Redis's default ``Q8``) 86 of 88 at 3.8 KB: fp32 at 16, also because the vector
#: read back for re-use must be the one written.
HNSW_M: Final = 16
#: Candidates explored per search, at least (more than ``k`` keeps recall at the dense top-10).
SEARCH_EF: Final = 200
#: Ids read per listing step.
SCAN_STEP: Final = 1000
_COMPARISONS: Final = {Gt: ">", Gte: ">=", Lt: "<", Lte: "<="}


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def token(field: str, value: object) -> str:
    """One payload value as a filter sees it: the field and the typed value (``1`` and ``1.0`` are one)."""
    kind = kind_of(value)
    shown = repr(float(value)) if kind == NUMBERS else json.dumps(value)  # type: ignore[arg-type]
    return _digest(f"{field}\0{kind}\0{shown}")


def _number(value: float) -> str:
    """A number as Redis's expression parser reads it: positional, since it refuses ``1e+20`` and ``1e-05``."""
    return format(decimal.Decimal(repr(float(value))), "f")


def word_token(word: str) -> str:
    return _digest(f"\0w\0{word}")


def number_field(field: str) -> str:
    return f"n_{field.encode().hex()}"


def attributes(record: Record) -> dict[str, Any]:
    """The element's attributes: what ``FILTER`` expressions read."""
    tokens: list[str] = []
    out: dict[str, Any] = {}
    for field, value in record.metadata.items():
        items = value if isinstance(value, list) else [value]
        tokens += [token(field, item) for item in items]
        if not isinstance(value, bool | list) and isinstance(value, int | float):
            out[number_field(field)] = value
    out["_t"] = sorted(set(tokens))
    out["_w"] = sorted({word_token(w) for w in words(record.text)})
    return out


def expression(node: Filter, *, conjunctive: bool = True) -> str:
    """``node`` as a ``FILTER`` expression; :class:`InvalidFilter` where Redis cannot say it exactly."""
    if isinstance(node, Eq):
        return f'"{token(node.field, node.value)}" in ._t'
    if isinstance(node, Ne):
        return f"not ({expression(Eq(node.field, node.value))})"
    if isinstance(node, In):
        return "(" + " or ".join(expression(Eq(node.field, v)) for v in node.values) + ")"
    if isinstance(node, Nin):
        return f"not {expression(In(node.field, node.values))}"
    if isinstance(node, Gt | Gte | Lt | Lte):
        if not conjunctive:
            raise InvalidFilter(
                f"the redis store cannot compare {node.field!r} inside an or: Redis skips a record that lacks "
                "a field the expression reads, so the other branches would lose it; ask for each branch apart"
            )
        return f".{number_field(node.field)} {_COMPARISONS[type(node)]} {_number(node.value)}"
    if isinstance(node, Contains):
        found = [f'"{word_token(w)}" in ._w' for w in dict.fromkeys(words(node.text))]
        return "(" + " and ".join(found) + ")" if found else "(1 == 1)"
    if isinstance(node, And):
        return "(" + " and ".join(expression(child, conjunctive=conjunctive) for child in node.filters) + ")"
    return "(" + " or ".join(expression(child, conjunctive=False) for child in node.filters) + ")"


class RedisStore(BaseStore):
    """kubevec's collections as Redis 8 vector sets (the ``vectorset`` module built into Redis 8)."""

    max_batch = 500

    def __init__(
        self,
        *,
        url: str,
        password: str | None = None,
        key_prefix: str = "kubevec:",
        tls_ca_file: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        parsed: dict[str, Any] = parse_url(url)  # type: ignore[no-untyped-call]
        where = f"{parsed.get('host', 'localhost')}:{parsed.get('port', 6379)}/{parsed.get('db', 0)}"
        super().__init__(backend="redis", location=f"{url.split('://', 1)[0]}://{where}")
        options: dict[str, Any] = {"ssl_ca_certs": tls_ca_file} if tls_ca_file else {}
        self._client = redis.Redis.from_url(
            url, password=password, socket_timeout=timeout, socket_connect_timeout=timeout, **options
        )
        self._prefix = key_prefix

    def _command(self, *args: Any, on: Any = None) -> Any:
        """A vector-set command (redis-py's ``execute_command`` is untyped), on the client or ``on`` a pipeline."""
        target = self._client if on is None else on
        return target.execute_command(*args)

    # -- keys ------------------------------------------------------------------------------------------

    def _key(self, name: str, part: str) -> str:
        return f"{self._prefix}{{{name}}}:{part}"

    def _exists(self, name: str) -> None:
        if not self._client.exists(self._key(name, "info")):
            raise CollectionNotFound(f"Collection {name!r} does not exist in redis at {self.location}")

    # -- hooks -----------------------------------------------------------------------------------------

    def _translate_error(self, exc: Exception) -> Exception:
        if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError) or is_transport_error(exc):
            return BackendUnavailable(f"redis at {self.location} is unavailable: {type(exc).__name__}: {exc}")
        return BackendError(f"redis at {self.location} failed: {type(exc).__name__}: {exc}")

    def _describe(self, name: str) -> CollectionInfo | None:
        info = self._client.hgetall(self._key(name, "info"))
        if not info:
            return None
        return CollectionInfo(
            dimension=int(info[b"dimension"]), distance=_text(info[b"distance"]), embedder=_text(info[b"embedder"])
        )

    def _create(self, name: str, info: CollectionInfo) -> None:
        self._client.hset(
            self._key(name, "info"),
            mapping={"dimension": info.dimension, "distance": info.distance, "embedder": info.embedder},
        )

    def _drop(self, name: str) -> None:
        self._client.delete(*(self._key(name, part) for part in ("info", "vec", "doc", "ids")))

    def _upsert(self, name: str, records: list[Record]) -> None:
        self._exists(name)
        vec, doc, ids = self._key(name, "vec"), self._key(name, "doc"), self._key(name, "ids")
        pipe = self._client.pipeline(transaction=True)
        for record in records:
            self._command(
                "VADD",
                vec,
                "FP32",
                struct.pack(f"<{len(record.vector)}f", *record.vector),
                record.id,
                "NOQUANT",
                "M",
                HNSW_M,
                "SETATTR",
                json.dumps(attributes(record), separators=(",", ":")),
                on=pipe,
            )
            pipe.hset(doc, record.id, json.dumps({"text": record.text, "metadata": dict(record.metadata)}))
            pipe.zadd(ids, {record.id: 0})
        pipe.execute()

    def _delete(self, name: str, ids: list[str]) -> None:
        self._exists(name)
        self._remove(name, ids)

    def _remove(self, name: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        pipe = self._client.pipeline(transaction=True)
        vec = self._key(name, "vec")
        for record_id in ids:
            self._command("VREM", vec, record_id, on=pipe)
        pipe.hdel(self._key(name, "doc"), *ids)
        pipe.zrem(self._key(name, "ids"), *ids)
        pipe.execute()

    def _delete_where(self, name: str, filter: Filter) -> None:
        self._exists(name)
        doomed = self._ids(name, filter)
        for start in range(0, len(doomed), self.max_batch):
            self._remove(name, doomed[start : start + self.max_batch])

    def _documents(self, name: str, ids: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        if not ids:
            return []
        raw = self._client.hmget(self._key(name, "doc"), list(ids))
        return [(i, json.loads(body)) for i, body in zip(ids, raw, strict=True) if body is not None]

    def _get(self, name: str, ids: list[str], include_vectors: bool) -> list[Record]:
        self._exists(name)
        found = self._documents(name, ids)
        vectors: list[list[float]] = [[] for _ in found]
        if include_vectors and found:
            pipe = self._client.pipeline(transaction=False)
            for record_id, _ in found:
                self._command("VEMB", self._key(name, "vec"), record_id, on=pipe)
            vectors = [[float(x) for x in row] for row in pipe.execute()]
        return [
            Record(id=i, vector=vector, text=body["text"], metadata=body["metadata"])
            for (i, body), vector in zip(found, vectors, strict=True)
        ]

    def _count(self, name: str, filter: Filter | None) -> int:
        self._exists(name)
        if filter is None:
            return int(self._client.zcard(self._key(name, "ids")))
        return len(self._ids(name, filter))

    def _all_ids(self, name: str) -> Iterable[str]:
        after = "-"
        while True:
            step = self._client.zrange(self._key(name, "ids"), after, "+", bylex=True, offset=0, num=SCAN_STEP)
            for item in step:
                yield _text(item)
            if len(step) < SCAN_STEP:
                return
            after = "(" + _text(step[-1])

    def _page(
        self, name: str, filter: Filter | None, cursor: Cursor | None, limit: int, with_text: bool
    ) -> tuple[list[Record], Cursor | None]:
        self._exists(name)
        after = "-" if cursor is None else "(" + str(cursor)
        page: list[Record] = []
        while True:
            step = [
                _text(i)
                for i in self._client.zrange(
                    self._key(name, "ids"), after, "+", bylex=True, offset=0, num=max(limit, 1)
                )
            ]
            for record_id, body in self._documents(name, step):
                if filter is None or matches(filter, text=body["text"], metadata=body["metadata"]):
                    page.append(
                        Record(
                            id=record_id, vector=[], text=body["text"] if with_text else "", metadata=body["metadata"]
                        )
                    )
                    if len(page) == limit:
                        more = bool(
                            self._client.zrange(
                                self._key(name, "ids"), "(" + record_id, "+", bylex=True, offset=0, num=1
                            )
                        )
                        return page, (record_id if more else None)
            if len(step) < max(limit, 1):
                return page, None
            after = "(" + step[-1]

    def _text_page(self, name: str, cursor: Cursor | None, limit: int) -> tuple[list[tuple[str, str]], Cursor | None]:
        records, after = self._page(name, None, cursor, limit, True)
        return [(r.id, r.text) for r in records], after

    def _server_ids(self, name: str, condition: str) -> list[str]:
        """Every id whose attributes pass ``condition``: an exact linear scan on the server (``TRUTH``)."""
        key = self._key(name, "vec")
        size = int(self._command("VCARD", key) or 0)
        if size == 0:
            return []
        info = self._describe(name)
        assert info is not None
        probe = [1.0] + [0.0] * (info.dimension - 1)
        found = self._command(
            "VSIM",
            key,
            "VALUES",
            info.dimension,
            *probe,
            "COUNT",
            size,
            "FILTER",
            condition,
            "FILTER-EF",
            size,
            "TRUTH",
        )
        return [_text(item) for item in found]

    def _ids(self, name: str, filter: Filter | None) -> list[str]:
        self._exists(name)
        if filter is None:
            return list(self._all_ids(name))
        try:
            condition = expression(filter)
        except InvalidFilter:  # a number compared inside an or: evaluated here, on every payload, exactly
            return [
                i
                for start_ids in _chunks(list(self._all_ids(name)), SCAN_STEP)
                for i, body in self._documents(name, start_ids)
                if matches(filter, text=body["text"], metadata=body["metadata"])
            ]
        return self._server_ids(name, condition)

    def _search(self, name: str, vector: list[float], k: int, filter: Filter | None) -> list[Hit]:
        self._exists(name)
        key = self._key(name, "vec")
        size = int(self._command("VCARD", key) or 0)
        if size == 0:
            return []
        args: list[Any] = ["VSIM", key, "FP32", struct.pack(f"<{len(vector)}f", *vector), "WITHSCORES"]
        args += ["COUNT", k, "EF", max(SEARCH_EF, k)]
        if filter is not None:
            args += ["FILTER", expression(filter), "FILTER-EF", size]
        answer = self._command(*args)
        scored = list(answer.items()) if isinstance(answer, dict) else list(zip(answer[::2], answer[1::2], strict=True))
        found = dict(self._documents(name, [_text(i) for i, _ in scored]))
        return [
            Hit(
                id=_text(i),
                score=min(1.0, max(0.0, 2.0 * float(s) - 1.0)),  # Redis says (1 + cos) / 2
                text=found[_text(i)]["text"],
                metadata=found[_text(i)]["metadata"],
            )
            for i, s in scored
            if _text(i) in found
        ]

    def _health(self) -> str:
        self._client.ping()
        return f"redis {self._client.info('server').get('redis_version', '?')} at {self.location}"

    def _close(self) -> None:
        self._client.close()


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _text(value: object) -> str:
    """What Redis answered, as text (redis-py gives bytes unless told to decode)."""
    return value.decode() if isinstance(value, bytes) else str(value)
