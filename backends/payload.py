"""Payloads in stores with typed columns (LanceDB, Weaviate): each field's values split by type.

Payload fields are open-ended and a filter may name any of them, but those stores filter on typed
columns or properties. So each field becomes, as it first appears, one column per type of value it
holds: strings, numbers (ints and floats alike) and booleans, each as a list (a scalar is a list of
one, so ``Eq`` is "the list contains"), with the names of the fields a record holds as lists kept
apart (numeric comparisons match scalars only). The full payload is stored as JSON beside them and
is what records are read back from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

STRINGS: Final = "s"
NUMBERS: Final = "n"
BOOLS: Final = "b"


def kind_of(value: object) -> str:
    """Which typed column a value goes to (a bool is not a number here, unlike in Python)."""
    if isinstance(value, bool):
        return BOOLS
    if isinstance(value, int | float):
        return NUMBERS
    return STRINGS


def typed(metadata: Mapping[str, Any]) -> dict[tuple[str, str], list[Any]]:
    """``{(field, kind): values}`` for every field (numbers as floats)."""
    out: dict[tuple[str, str], list[Any]] = {}
    for field, value in metadata.items():
        for item in value if isinstance(value, list) else [value]:
            kind = kind_of(item)
            out.setdefault((field, kind), []).append(float(item) if kind == NUMBERS else item)
    return out


def list_fields(metadata: Mapping[str, Any]) -> list[str]:
    """The fields a record holds as lists, sorted."""
    return sorted(field for field, value in metadata.items() if isinstance(value, list))
