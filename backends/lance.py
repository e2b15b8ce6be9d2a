"""LanceDB: embedded, a directory of Lance tables, one table per collection (the index on disk, not in memory).

A table holds ``id``, ``vector``, ``text``, the payload as JSON (``_payload``, what records are read
back from) and the text's lower-cased words (``_words``, so ``Contains`` keeps its whole-word
meaning). Filters need typed columns, and payloads are open-ended, so each payload field gets
columns as it first appears (``add_columns``, null for the records before): its strings, its
numbers and its booleans, each as a list (a scalar is a list of one; ``_lists`` names the fields a
record holds as a list, which numeric comparisons must not match). Column names are the field's
bytes in hex, so no field name reaches SQL; values are written as escaped SQL literals
(:func:`literal`), the one way Lance takes them. Scalar indexes are created on the filter fields
the caller names (``LABEL_LIST`` over those lists) once a table has rows.

The collection's dimension and embedder are kept in the table's schema metadata.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import lancedb
import pyarrow as pa

from kubevec.backends.base import BaseStore
from kubevec.backends.filters import And, Contains, Eq, Filter, Gt, Gte, In, Lt, Lte, Ne, Nin, Or, words
from kubevec.backends.paging import IdOrder
from kubevec.backends.payload import BOOLS, NUMBERS, STRINGS, kind_of, list_fields, typed
from kubevec.backends.protocol import DEFAULT_PAGE_SIZE, CollectionInfo, Cursor
from kubevec.backends.records import Hit, MetadataValue, Record, cosine_distance_to_score
from kubevec.backends.stamps import STAMPS
from kubevec.core.errors import BackendError, BackendUnavailable, CollectionNotFound, InvalidFilter

PAYLOAD: Final = "_payload"
WORDS: Final = "_words"
LISTS: Final = "_lists"
_STRINGS, _NUMBERS, _BOOLS = STRINGS, NUMBERS, BOOLS
_KINDS: Final = {_STRINGS: pa.list_(pa.string()), _NUMBERS: pa.list_(pa.float64()), _BOOLS: pa.list_(pa.bool_())}
_META_EMBEDDER: Final = b"kubevec.embedder"
_META_DIMENSION: Final = b"kubevec.dimension"
_META_INDEXED: Final = b"kubevec.indexed"


def column(field: str, kind: str) -> str:
    """A payload field's column of one kind: ``m<kind>_<hex of the name>`` (no field name reaches SQL)."""
    return f"m{kind}_{field.encode().hex()}"


def literal(value: str | float | bool) -> str:
    """A value as a SQL literal: strings quoted with quotes doubled, numbers finite, booleans as words."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        if not math.isfinite(float(value)):
            raise InvalidFilter(f"Filter values must be finite numbers, got {value!r}")
        return repr(float(value))
    if "\x00" in value:
        raise InvalidFilter("Filter values cannot contain NUL characters")
    return "'" + value.replace("'", "''") + "'"


class LanceStore(BaseStore):
    """A Lance table per kubevec collection, in one directory."""

    max_batch = 1000

    def __init__(self, *, path: str, follow: bool = False) -> None:
        """``follow``: this process only reads a directory another process writes (a table opened
        here stays at the version it opened, lancedb's default): it reopens its tables when the
        write stamps say another process wrote (stamps.py), and reads the stamps themselves afresh."""
        super().__init__(backend="lancedb", location=path, follow=follow)
        self._path = path
        self._db: Any = None
        self._tables: dict[str, Any] = {}
        self._order = IdOrder(self._ids)

    def _connect(self) -> Any:
        if self._db is None:
            Path(self._path).mkdir(parents=True, exist_ok=True)
            self._db = lancedb.connect(self._path)
        return self._db

    def _table(self, name: str) -> Any:
        table = self._tables.get(name)
        if table is None:
            try:
                table = self._connect().open_table(name)
            except (FileNotFoundError, ValueError) as exc:
                raise CollectionNotFound(f"Collection {name!r} does not exist in lancedb at {self.location}") from exc
            self._tables[name] = table
        return table

    def _translate_error(self, exc: Exception) -> Exception:
        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, PermissionError | OSError) and not isinstance(exc, FileNotFoundError):
            return BackendUnavailable(f"lancedb at {self.location} cannot be used: {text}")
        if isinstance(exc, FileNotFoundError) or "not found" in str(exc).lower():
            self._tables.clear()
            return CollectionNotFound(f"lancedb at {self.location}: {text}")
        return BackendError(f"lancedb at {self.location} failed: {text}")

    # -- hooks ---------------------------------------------------------------------------------

    def _describe(self, name: str) -> CollectionInfo | None:
        if name not in self._names():
            self._tables.pop(name, None)
            return None
        meta = self._table(name).schema.metadata or {}
        if _META_DIMENSION not in meta:
            raise BackendError(f"lancedb table {name!r} at {self.location} was not created by kubevec")
        return CollectionInfo(
            dimension=int(meta[_META_DIMENSION]), distance="cosine", embedder=meta.get(_META_EMBEDDER, b"").decode()
        )

    def _names(self) -> set[str]:
        db = self._connect()
        names: set[str] = set()
        token = None
        while True:
            listed = db.list_tables(page_token=token) if token else db.list_tables()
            names.update(getattr(listed, "tables", listed))
            token = getattr(listed, "page_token", None)
            if not token:
                return names

    def _create(self, name: str, info: CollectionInfo) -> None:
        schema = pa.schema(
            [
                ("id", pa.string()),
                ("vector", pa.list_(pa.float32(), info.dimension)),
                ("text", pa.string()),
                (PAYLOAD, pa.string()),
                (WORDS, pa.list_(pa.string())),
                (LISTS, pa.list_(pa.string())),
            ],
            metadata={_META_DIMENSION: str(info.dimension).encode(), _META_EMBEDDER: info.embedder.encode()},
        )
        self._tables[name] = self._connect().create_table(name, schema=schema)

    def _ensure_indexes(self, name: str, fields: tuple[str, ...]) -> None:
        """Remember the filter fields; their scalar indexes are built once the table has rows (see ``_index``)."""
        table = self._table(name)
        self._indexed = getattr(self, "_indexed", {})
        self._indexed[name] = fields
        if table.count_rows() > 0:
            self._index(name)

    def _index(self, name: str) -> None:
        table = self._table(name)
        present = {c for c in table.schema.names}
        existing = {tuple(getattr(i, "columns", ())) for i in table.list_indices()}
        wanted = ["id"] + [column(f, _STRINGS) for f in getattr(self, "_indexed", {}).get(name, ())]
        for name_ in wanted:
            if name_ in present and (name_,) not in existing:
                kind = "BTREE" if name_ == "id" else "LABEL_LIST"
                with warnings.catch_warnings():  # the sync API's create_index() takes no scalar column yet
                    warnings.simplefilter("ignore", DeprecationWarning)
                    table.create_scalar_index(name_, index_type=kind, replace=True)

    def _drop(self, name: str) -> None:
        self._tables.pop(name, None)
        if name in self._names():
            self._connect().drop_table(name)

    def _upsert(self, name: str, records: list[Record]) -> None:
        table = self._table(name)
        rows = [_row(record) for record in records]
        present = set(table.schema.names)
        missing = sorted({key for row in rows for key in row} - present)
        if missing:
            table.add_columns(pa.schema([pa.field(c, _KINDS[c[1]]) for c in missing]))
            present |= set(missing)
        full = [{c: row.get(c) for c in present} for row in rows]
        data = pa.Table.from_pylist(full, schema=_without_metadata(table.schema))
        had_rows = table.count_rows() > 0
        table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
        if not had_rows or missing:
            self._index(name)

    def _delete(self, name: str, ids: list[str]) -> None:
        if ids:
            self._table(name).delete(_ids_in(ids))

    def _delete_where(self, name: str, filter: Filter) -> None:
        self._table(name).delete(self._sql(name, filter))

    def _get(self, name: str, ids: list[str], include_vectors: bool) -> list[Record]:
        if not ids:
            return []
        columns = ["id", "text", PAYLOAD, *(["vector"] if include_vectors else [])]
        rows = self._table(name).search().where(_ids_in(ids)).select(columns).limit(len(ids)).to_list()
        return [_record(row, with_text=True) for row in rows]

    def _count(self, name: str, filter: Filter | None) -> int:
        table = self._table(name)
        return int(table.count_rows(self._sql(name, filter)) if filter is not None else table.count_rows())

    def _page(
        self, name: str, filter: Filter | None, cursor: Cursor | None, limit: int, with_text: bool
    ) -> tuple[list[Record], Cursor | None]:
        """Pages in id order over one listing of the matching ids (backends/paging.py), records by id."""
        page, after = self._order.page(name, filter, cursor, limit)
        if not page:
            return [], after
        columns = ["id", PAYLOAD, *(["text"] if with_text else [])]
        rows = self._table(name).search().where(_ids_in(page)).select(columns).limit(len(page)).to_list()
        by_id = {str(row["id"]): _record(row, with_text=with_text) for row in rows}
        return [by_id[i] for i in page if i in by_id], after

    def _text_page(self, name: str, cursor: Cursor | None, limit: int) -> tuple[list[tuple[str, str]], Cursor | None]:
        page, after = self._order.page(name, None, cursor, limit)
        if not page:
            return [], after
        rows = self._table(name).search().where(_ids_in(page)).select(["id", "text"]).limit(len(page)).to_list()
        texts = {str(row["id"]): str(row["text"] or "") for row in rows}
        return [(i, texts[i]) for i in page if i in texts], after

    def _ids(self, name: str, filter: Filter | None) -> list[str]:
        table = self._table(name)
        query = table.search().select(["id"]).limit(max(1, table.count_rows()))
        if filter is not None:
            query = query.where(self._sql(name, filter))
        return [str(row["id"]) for row in query.to_arrow().to_pylist()]

    def _search(self, name: str, vector: list[float], k: int, filter: Filter | None) -> list[Hit]:
        query = (
            self._table(name)
            .search(vector, vector_column_name="vector")
            .metric("cosine")
            .select(["id", "text", PAYLOAD, "_distance"])  # named: lance warns on stderr when it adds it itself
            .limit(k)
        )
        if filter is not None:
            query = query.where(self._sql(name, filter), prefilter=True)
        hits = []
        for row in query.to_list():
            record = _record(row, with_text=True)
            hits.append(
                Hit(
                    id=record.id,
                    score=cosine_distance_to_score(float(row["_distance"])),
                    text=record.text,
                    metadata=record.metadata,
                )
            )
        return hits

    def _health(self) -> str:
        if not os.access(self._path, os.W_OK) and Path(self._path).exists():
            raise PermissionError(f"{self._path} is not writable")
        return f"lancedb at {self.location}: {len(self._names())} tables"

    def _close(self) -> None:
        self._tables.clear()
        self._db = None

    def _reopen(self) -> None:
        self._tables.clear()  # opened again at their latest versions

    def _read_stamps(self) -> dict[str, str]:
        if self._follow:
            self._tables.pop(STAMPS, None)  # the version written since, not the one opened before
        return super()._read_stamps()

    # -- filters -------------------------------------------------------------------------------

    def _sql(self, name: str, node: Filter) -> str:
        return _Translator(set(self._table(name).schema.names)).sql(node)


class _Translator:
    """Portable filter -> a Lance SQL predicate over the typed columns that exist."""

    def __init__(self, columns: set[str]) -> None:
        self.columns = columns

    def sql(self, node: Filter) -> str:
        if isinstance(node, Eq):
            return self._eq(node.field, node.value)
        if isinstance(node, Ne):
            return f"(NOT {self._eq(node.field, node.value)})"
        if isinstance(node, In):
            return self._any(node.field, node.values)
        if isinstance(node, Nin):
            return f"(NOT {self._any(node.field, node.values)})"
        if isinstance(node, Gt | Gte | Lt | Lte):
            operator = {Gt: ">", Gte: ">=", Lt: "<", Lte: "<="}[type(node)]
            numbers = column(node.field, _NUMBERS)
            if numbers not in self.columns:
                return "false"
            return (
                f"(coalesce(array_length({numbers}), 0) = 1 AND NOT coalesce(array_has({LISTS}, "
                f"{literal(node.field)}), false) AND array_element({numbers}, 1) {operator} {literal(node.value)})"
            )
        if isinstance(node, Contains):
            found = [
                f"coalesce(array_has({WORDS}, {literal(word)}), false)" for word in dict.fromkeys(words(node.text))
            ]
            return f"({' AND '.join(found)})" if found else "true"
        if isinstance(node, And):
            return "(" + " AND ".join(self.sql(child) for child in node.filters) + ")"
        if isinstance(node, Or):
            return "(" + " OR ".join(self.sql(child) for child in node.filters) + ")"
        raise InvalidFilter(f"Cannot translate {node!r} for lancedb")

    def _eq(self, field: str, value: str | float | bool) -> str:
        kind = kind_of(value)
        name = column(field, kind)
        if name not in self.columns:
            return "false"
        return f"coalesce(array_has({name}, {literal(value)}), false)"

    def _any(self, field: str, values: Iterable[str | float | bool]) -> str:
        parts = [self._eq(field, value) for value in values]
        return "(" + " OR ".join(parts) + ")" if parts else "false"


def _row(record: Record) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": record.id,
        "vector": [float(x) for x in record.vector],
        "text": record.text,
        PAYLOAD: json.dumps(dict(record.metadata), ensure_ascii=False, separators=(",", ":")),
        WORDS: sorted(set(words(record.text))),
        LISTS: list_fields(record.metadata),
    }
    for (field, kind), values in typed(record.metadata).items():
        row[column(field, kind)] = values
    return row


def _record(row: dict[str, Any], *, with_text: bool) -> Record:
    payload: dict[str, MetadataValue] = json.loads(row.get(PAYLOAD) or "{}")
    vector = row.get("vector")
    return Record(
        id=str(row["id"]),
        vector=[float(x) for x in vector] if vector is not None else [],
        text=str(row.get("text") or "") if with_text else "",
        metadata=payload,
    )


def _ids_in(ids: Sequence[str]) -> str:
    return f"id IN ({', '.join(literal(i) for i in ids)})"


def _without_metadata(schema: pa.Schema) -> pa.Schema:
    return schema.remove_metadata()


__all__ = ["DEFAULT_PAGE_SIZE", "LanceStore", "column", "literal"]
