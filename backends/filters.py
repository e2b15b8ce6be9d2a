"""The portable filter: a small frozen AST that every backend translates, and agents can send as JSON.

Semantics (the same on every backend, checked by the conformance suite):

- ``Eq(field, v)``: the field equals ``v``, or the field is a list that contains ``v``.
- ``Ne(field, v)``: not ``Eq``; a record without the field matches.
- ``In(field, vs)`` / ``Nin``: ``Eq`` with any of ``vs`` / none of them (missing fields match ``Nin``).
- ``Gt Gte Lt Lte``: numeric comparisons; a record without the field (or with a non-number) does not match.
- ``Contains(text)``: every word of ``text`` appears as a whole word in the document text, case-insensitive.
  Words are runs of letters and digits (``cert_manager`` is two words), as Qdrant's word tokenizer has it.
- ``And`` / ``Or``: conjunction / disjunction of one or more filters.

JSON: the canonical form is ``{"op": "eq", "field": "kind", "value": "Deployment"}`` (``and``/``or``
take ``"filters"``, ``in``/``nin`` take ``"values"``, ``contains`` takes ``"text"``). A Mongo-like
shorthand is accepted too: ``{"kind": "Deployment", "namespace": {"$in": ["a", "b"]}, "$contains": "tls"}``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from kubevec.backends.records import MetadataValue, Scalar
from kubevec.core import fields
from kubevec.core.errors import InvalidFilter
from kubevec.core.nesting import json_too_deep

MAX_DEPTH: Final = 8
MAX_CHILDREN: Final = 64
MAX_VALUES: Final = 256
MAX_STRING: Final = 1024
#: JSON nesting allowed in filter text: the shorthand spends two JSON levels per filter level.
MAX_JSON_DEPTH: Final = 2 * MAX_DEPTH + 4
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")
_WORD = re.compile(r"[^\W_]+")

Number: TypeAlias = int | float


def words(text: str) -> list[str]:
    """Lower-cased word tokens, as ``Contains`` and keyword search see them."""
    return [token.lower() for token in _WORD.findall(text)]


@dataclasses.dataclass(frozen=True)
class Eq:
    field: str
    value: Scalar


@dataclasses.dataclass(frozen=True)
class Ne:
    field: str
    value: Scalar


@dataclasses.dataclass(frozen=True)
class Gt:
    field: str
    value: Number


@dataclasses.dataclass(frozen=True)
class Gte:
    field: str
    value: Number


@dataclasses.dataclass(frozen=True)
class Lt:
    field: str
    value: Number


@dataclasses.dataclass(frozen=True)
class Lte:
    field: str
    value: Number


@dataclasses.dataclass(frozen=True)
class In:
    field: str
    values: tuple[Scalar, ...]


@dataclasses.dataclass(frozen=True)
class Nin:
    field: str
    values: tuple[Scalar, ...]


@dataclasses.dataclass(frozen=True)
class Contains:
    text: str


@dataclasses.dataclass(frozen=True)
class And:
    filters: tuple[Filter, ...]


@dataclasses.dataclass(frozen=True)
class Or:
    filters: tuple[Filter, ...]


Comparison: TypeAlias = Gt | Gte | Lt | Lte
Filter: TypeAlias = Eq | Ne | Gt | Gte | Lt | Lte | In | Nin | Contains | And | Or

_SCALAR_OPS: Final[dict[str, type[Eq | Ne]]] = {"eq": Eq, "ne": Ne}
_RANGE_OPS: Final[dict[str, type[Comparison]]] = {"gt": Gt, "gte": Gte, "lt": Lt, "lte": Lte}
_SET_OPS: Final[dict[str, type[In | Nin]]] = {"in": In, "nin": Nin}
_BOOL_OPS: Final[dict[str, type[And | Or]]] = {"and": And, "or": Or}
OPERATORS: Final = frozenset({*_SCALAR_OPS, *_RANGE_OPS, *_SET_OPS, *_BOOL_OPS, "contains"})


# -- construction helpers ------------------------------------------------------------------------


def all_of(*filters: Filter | None, flatten: bool = False) -> Filter | None:
    """AND the given filters, skipping ``None``; ``None`` when nothing is left, the filter itself when one is.

    The one conjunction every package builds with. ``flatten``: an ``And`` among them gives its children
    instead of itself, so a caller's filter AND a scope keeps its depth budget (it spends width instead:
    both are bounded, ``MAX_DEPTH`` and ``MAX_CHILDREN``).
    """
    present = tuple(f for f in filters if f is not None)
    if flatten:
        present = tuple(part for f in present for part in (f.filters if isinstance(f, And) else (f,)))
    if not present:
        return None
    return present[0] if len(present) == 1 else And(present)


# -- validation ----------------------------------------------------------------------------------


def validate(node: object, *, depth: int = 1) -> Filter:
    """Check a filter built in code the same way JSON input is checked; return it unchanged."""
    if depth > MAX_DEPTH:
        raise InvalidFilter(f"Filter is nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, Eq | Ne):
        _check_field(node.field)
        _check_scalar(node.value, where=node.field)
    elif isinstance(node, Gt | Gte | Lt | Lte):
        _check_field(node.field)
        _check_number(node.value, where=node.field)
    elif isinstance(node, In | Nin):
        _check_field(node.field)
        if not isinstance(node.values, tuple) or not node.values:
            raise InvalidFilter(f"'{type(node).__name__.lower()}' on {node.field!r} needs a non-empty list of values")
        if len(node.values) > MAX_VALUES:
            raise InvalidFilter(f"'{type(node).__name__.lower()}' on {node.field!r} has more than {MAX_VALUES} values")
        for value in node.values:
            _check_scalar(value, where=node.field)
        if len({_kind(value) for value in node.values}) > 1:
            raise InvalidFilter(f"Values of '{type(node).__name__.lower()}' on {node.field!r} must all be one type")
    elif isinstance(node, Contains):
        if not isinstance(node.text, str) or not words(node.text):
            raise InvalidFilter("'contains' needs a text with at least one word (letters or digits)")
        if len(node.text) > MAX_STRING:
            raise InvalidFilter(f"'contains' text is longer than {MAX_STRING} characters")
    elif isinstance(node, And | Or):
        if not isinstance(node.filters, tuple) or not node.filters:
            raise InvalidFilter(f"'{type(node).__name__.lower()}' needs a non-empty list of filters")
        if len(node.filters) > MAX_CHILDREN:
            raise InvalidFilter(f"'{type(node).__name__.lower()}' has more than {MAX_CHILDREN} filters")
        for child in node.filters:
            validate(child, depth=depth + 1)
    else:
        raise InvalidFilter(f"Not a filter: {node!r}")
    return node


def _check_field(field: object) -> None:
    if not isinstance(field, str) or not _FIELD.match(field):
        raise InvalidFilter(
            f"Invalid field name {field!r}: use letters, digits, '_', '.', '-' (at most 128, not starting with a digit)"
        )


def _check_scalar(value: object, *, where: str) -> None:
    if isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidFilter(f"Value for {where!r} must be a finite number, got {value!r}")
        return
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise InvalidFilter(f"Value for {where!r} is longer than {MAX_STRING} characters")
        return
    raise InvalidFilter(f"Value for {where!r} must be a string, number or boolean, got {type(value).__name__}")


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, int | float) else "str"


def _check_number(value: object, *, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidFilter(f"Range comparison on {where!r} needs a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidFilter(f"Range comparison on {where!r} needs a finite number, got {value!r}")


# -- JSON ----------------------------------------------------------------------------------------


def to_json(node: Filter) -> dict[str, Any]:
    """The canonical JSON form (see the module docstring)."""
    if isinstance(node, Eq | Ne | Gt | Gte | Lt | Lte):
        return {"op": type(node).__name__.lower(), "field": node.field, "value": node.value}
    if isinstance(node, In | Nin):
        return {"op": type(node).__name__.lower(), "field": node.field, "values": list(node.values)}
    if isinstance(node, Contains):
        return {"op": "contains", "text": node.text}
    return {"op": type(node).__name__.lower(), "filters": [to_json(child) for child in node.filters]}


def parse_json_text(text: str) -> Filter:
    """A filter from JSON text (CLI flags, files): depth checked before parsing, then :func:`from_json`."""
    return from_json(load_json_text(text))


def load_json_text(text: str) -> Any:
    """JSON text as data, refused before parsing when it nests deeper than any valid filter can."""
    if json_too_deep(text, limit=MAX_JSON_DEPTH):
        raise InvalidFilter(f"Filter is nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidFilter(f"Filter is not valid JSON: {exc}") from exc


def from_json(data: object, *, depth: int = 1) -> Filter:
    """Parse the canonical form or the Mongo-like shorthand; raise :class:`InvalidFilter` on anything else."""
    if depth > MAX_DEPTH:
        raise InvalidFilter(f"Filter is nested deeper than {MAX_DEPTH} levels")
    if not isinstance(data, Mapping):
        raise InvalidFilter(f"A filter must be a JSON object, got {type(data).__name__}")
    if "op" in data:
        return validate(_from_canonical(data, depth=depth), depth=depth)
    return validate(_from_shorthand(data, depth=depth), depth=depth)


def _from_canonical(data: Mapping[str, Any], *, depth: int) -> Filter:
    op = data["op"]
    if not isinstance(op, str) or op.lower() not in OPERATORS:
        raise InvalidFilter(f"Unknown filter operator {op!r}; expected one of {', '.join(sorted(OPERATORS))}")
    op = op.lower()
    expected = {"op", "field", "value"} if op in _SCALAR_OPS or op in _RANGE_OPS else set()
    expected = expected or ({"op", "field", "values"} if op in _SET_OPS else set())
    expected = expected or ({"op", "text"} if op == "contains" else {"op", "filters"})
    missing = expected - set(data)
    extra = set(data) - expected
    if missing or extra:
        parts = [f"missing {sorted(missing)}" if missing else "", f"unexpected {sorted(extra)}" if extra else ""]
        raise InvalidFilter(f"Filter {op!r}: {' and '.join(p for p in parts if p)}")
    if op in _SCALAR_OPS:
        return _SCALAR_OPS[op](data["field"], data["value"])
    if op in _RANGE_OPS:
        return _RANGE_OPS[op](data["field"], data["value"])
    if op in _SET_OPS:
        return _SET_OPS[op](data["field"], _as_values(data["values"], op=op))
    if op == "contains":
        return Contains(data["text"])
    children = data["filters"]
    if not isinstance(children, list):
        raise InvalidFilter(f"'{op}' needs a list of filters")
    return _BOOL_OPS[op](tuple(from_json(child, depth=depth + 1) for child in children))


_SHORTHAND_OPS: Final = {"$eq": "eq", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}


def _from_shorthand(data: Mapping[str, Any], *, depth: int) -> Filter:
    parts: list[Filter] = []
    for key, value in data.items():
        if not isinstance(key, str):
            raise InvalidFilter(f"Filter keys must be strings, got {key!r}")
        if key in ("$and", "$or"):
            if not isinstance(value, list):
                raise InvalidFilter(f"'{key}' needs a list of filters")
            children = tuple(from_json(child, depth=depth + 1) for child in value)
            parts.append(And(children) if key == "$and" else Or(children))
        elif key == "$contains":
            parts.append(Contains(value))
        elif key.startswith("$"):
            raise InvalidFilter(f"Unknown filter operator {key!r} at the top level; expected $and, $or or $contains")
        elif isinstance(value, Mapping):
            if not value:
                raise InvalidFilter(f"Empty condition for field {key!r}")
            for op, operand in value.items():
                if op in _SHORTHAND_OPS:
                    name = _SHORTHAND_OPS[op]
                    cls: Any = _SCALAR_OPS.get(name) or _RANGE_OPS[name]
                    parts.append(cls(key, operand))
                elif op in ("$in", "$nin"):
                    parts.append(_SET_OPS[op[1:]](key, _as_values(operand, op=op)))
                else:
                    raise InvalidFilter(
                        f"Unknown operator {op!r} on field {key!r}; expected $eq $ne $gt $gte $lt $lte $in $nin"
                    )
        else:
            parts.append(Eq(key, value))
    combined = all_of(*parts)
    if combined is None:
        raise InvalidFilter("Empty filter")
    return combined


def _as_values(values: object, *, op: str) -> tuple[Scalar, ...]:
    if not isinstance(values, list | tuple):
        raise InvalidFilter(f"'{op}' needs a list of values, got {type(values).__name__}")
    return tuple(values)


# -- the reference semantics ---------------------------------------------------------------------


def matches(node: Filter, *, text: str, metadata: Mapping[str, MetadataValue]) -> bool:
    """Evaluate a filter on one record; the memory backend uses this, the others must agree with it."""
    if isinstance(node, Eq):
        return _eq(fields.value(metadata, node.field), node.value)
    if isinstance(node, Ne):
        return not _eq(fields.value(metadata, node.field), node.value)
    if isinstance(node, In):
        return any(_eq(fields.value(metadata, node.field), value) for value in node.values)
    if isinstance(node, Nin):
        return not any(_eq(fields.value(metadata, node.field), value) for value in node.values)
    if isinstance(node, Gt | Gte | Lt | Lte):
        actual = fields.value(metadata, node.field)
        if isinstance(actual, bool) or not isinstance(actual, int | float):
            return False
        if isinstance(node, Gt):
            return actual > node.value
        if isinstance(node, Gte):
            return actual >= node.value
        if isinstance(node, Lt):
            return actual < node.value
        return actual <= node.value
    if isinstance(node, Contains):
        present = set(words(text))
        return all(word in present for word in words(node.text))
    if isinstance(node, And):
        return all(matches(child, text=text, metadata=metadata) for child in node.filters)
    return any(matches(child, text=text, metadata=metadata) for child in node.filters)


def _eq(actual: MetadataValue | None, expected: Scalar) -> bool:
    if isinstance(actual, list):
        return any(_same(item, expected) for item in actual)
    return actual is not None and _same(actual, expected)


def _same(actual: Scalar, expected: Scalar) -> bool:
    # True == 1 in Python, but not in a metadata store: booleans only equal booleans.
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    return actual == expected
