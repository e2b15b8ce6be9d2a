"""The reading commands' flags, derived from their tools' declared requests as the MCP tools' parameters are.

A field of the request is a flag here without anyone writing it: its name (``fetch_k`` is ``--fetch-k``),
its type, its choices (a ``Literal``), its bounds and its description come from the model, so the CLI
and the MCP tool cannot drift apart and a new option is one field (and the code that honours it).
What the CLI spells its own way is said in :data:`SPELLED` (kubectl's ``-n`` and ``-l``, ``--no-hybrid``),
and where a flag's help is worded for a person rather than an agent, the field says so with a
:class:`~kubevec.query.flags.Flag` (its help, a positional, or not offered).
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from kubevec.core.errors import CommandError, InvalidFilter
from kubevec.query.flags import Flag

#: Flags spelled as kubectl (or habit) spells them, by field; every other field is ``--field-name``.
SPELLED: Final[Mapping[str, tuple[str, ...]]] = {
    "namespace": ("-n", "--namespace"),
    "labels": ("-l", "--label"),
    "k": ("-k",),
}
#: The question is the positional argument, as it reads best on a command line.
POSITIONAL: Final = "query"


def label_selector(values: Sequence[str]) -> list[str]:
    """``-l a=b,c=d -l e=f`` as kubectl reads it: every ``k=v`` must match."""
    return [label.strip() for value in values for label in value.split(",") if label.strip()]


def _filter_json(text: str) -> Any:
    from kubevec.backends.filters import load_json_text

    try:
        return load_json_text(text)
    except InvalidFilter as exc:
        raise CommandError(f"--filter: {exc}") from exc


#: How a flag's text becomes the field's value, where ``type=`` cannot say it.
CONVERTERS: Final[Mapping[str, Callable[[Any], Any]]] = {"labels": label_selector, "filter": _filter_json}


class Adds(Protocol):
    """What a flag is added to: a parser, or a group of one."""

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action: ...


def _bare(annotation: Any) -> Any:
    """The type under ``X | None``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _bounds(field: FieldInfo) -> str:
    low = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
    high = next((m.le for m in field.metadata if hasattr(m, "le")), None)
    return f" ({low}-{high})" if low is not None and high is not None else ""


def add_request_flags(
    parser: Adds,
    model: type[BaseModel],
    *,
    into: Mapping[str, Adds] | None = None,
) -> None:
    """One flag per field of ``model`` (``into``: a group a field's flag joins, e.g. a mutually exclusive one).

    Every flag defaults to "not given", so the model's own default applies: one default, in one place.
    A field with a :class:`Flag` is named by itself in the usage (``--since SINCE``), as those commands
    have always printed; one without by its type (``--fetch-k INT``), as ``kubevec search`` does.
    """
    for name, field in model.model_fields.items():
        flag = next((m for m in field.metadata if isinstance(m, Flag)), None)
        if flag is not None and flag.hidden:
            continue
        target = (into or {}).get(name, parser)
        description = (field.description or "").rstrip(".") + _bounds(field)
        if flag is not None and flag.help is not None:
            description = flag.help
        kind = str if flag is not None and flag.text else _bare(field.annotation)
        options: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS}
        if flag is not None and flag.positional:
            target.add_argument(name, help=description, **({"nargs": "?", "default": None} if flag.optional else {}))
            continue
        if flag is None and name == POSITIONAL:
            target.add_argument(name, nargs="?", help=description + " (optional with --keyword or a filter)")
            continue
        flags = (flag.names if flag is not None else ()) or SPELLED.get(name, (f"--{name.replace('_', '-')}",))
        typed = flag is None  # metavar by type
        if kind is bool:
            if field.default is True:  # on unless turned off
                flags = (f"--no-{name.replace('_', '-')}",)
                options.update(action="store_false", help=f"do not: {description[:1].lower()}{description[1:]}")
            else:
                options.update(action="store_true", help=description)
        elif typing.get_origin(kind) is Literal:
            options.update(choices=typing.get_args(kind), help=description)
        elif typing.get_origin(kind) is tuple:
            options.update(action="append", help=description + " (comma-separated or repeated)", metavar="K=V")
        elif kind in (int, float):
            options.update(type=kind, help=description, **({"metavar": kind.__name__.upper()} if typed else {}))
        elif typed:  # text, and JSON for a mapping (see CONVERTERS)
            options.update(help=description, metavar="JSON" if typing.get_origin(kind) is dict else "TEXT")
        else:
            options.update(help=description)
        target.add_argument(*flags, **options)


def request_fields(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The fields given on the command line, converted, for ``model.build(**fields)``."""
    given = {name: getattr(args, name) for name in model.model_fields if hasattr(args, name)}
    return {name: CONVERTERS[name](value) if name in CONVERTERS else value for name, value in given.items()}
