"""What the commands share: how they register, the store, the embedder, the search service (see ``serving``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kubevec.core.errors import CommandError

if TYPE_CHECKING:
    from pydantic import ValidationError

    from kubevec.backends import VectorStore
    from kubevec.controller.settings import Settings
    from kubevec.inference.providers.embedders.base import Embedder
    from kubevec.query.search import SearchService

logger = logging.getLogger("kubevec")

#: What a command runs: given its arguments and the settings, an exit code (or a coroutine of one).
Handler = Callable[[argparse.Namespace, "Settings"], int | Coroutine[Any, Any, int]]
#: The ``-o`` formats of the reading commands.
FORMATS: Final = ("text", "json", "yaml")
#: The resident reader's search service (set in its process only): every reading command uses it as
#: it is, warm, instead of opening the store and loading the model (``resident_server``).
RESIDENT: ContextVar[SearchService | None] = ContextVar("kubevec_resident_service", default=None)


def _global_flags(parser: argparse.ArgumentParser, *, default: Any) -> None:
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        default=default,
        help="kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)",
    )
    parser.add_argument("--context", default=default, help="kubeconfig context to use (default: its current-context)")


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that keeps what was added to it: its actions and its subcommands' parsers,
    and adds a command's flags only when that command is parsed (or its flags are read).

    Shell completion is built from this record (``completion.py``), through argparse's public API
    only: ``add_argument`` returns each action, and :class:`Commands` makes every subcommand's parser.
    A command whose flags come from its tool's declared request (pydantic models, the costliest
    import of ``kubevec --help``) adds them :meth:`later`: ``kubevec --help`` lists the commands
    without building any, ``kubevec search -h`` builds the one it shows.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._recorded: list[argparse.Action] = []
        self._pending: list[Callable[[Parser], None]] = []
        #: Each subcommand's parser, by its name.
        self.subcommands: dict[str, Parser] = {}
        super().__init__(*args, **kwargs)

    @property
    def recorded(self) -> list[argparse.Action]:
        """Every action ``add_argument`` made here (``-h`` too), in order, groups' included."""
        self.complete()
        return self._recorded

    def later(self, add: Callable[[Parser], None]) -> None:
        """Add flags with ``add(self)`` when this parser is first used, not when it is made."""
        self._pending.append(add)

    def complete(self, *, nested: bool = False) -> Parser:
        """Add the flags left for later (``nested``: of every subcommand's parser too)."""
        pending, self._pending = self._pending, []
        for add in pending:
            add(self)
        if nested:
            for sub in self.subcommands.values():
                sub.complete(nested=True)
        return self

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.complete()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self.complete()
        return super().format_help()

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self._recorded.append(action)
        return action

    def exclusive(self) -> Group:
        """A mutually exclusive group whose flags are recorded here as well."""
        return Group(self, self.add_mutually_exclusive_group())


class Group:
    """A group of ``parser``'s flags (mutually exclusive), each recorded on the parser."""

    def __init__(self, parser: Parser, group: Any) -> None:
        self._parser, self._group = parser, group

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action: argparse.Action = self._group.add_argument(*args, **kwargs)
        self._parser._recorded.append(action)
        return action


class Commands:
    """Where each command module registers itself: ``commands.add("status", status, help=...)``.

    Every parser made here (nested ones too) also takes the global flags, after the command as before
    it (``kubevec status --kubeconfig x``), as kubectl's do; with no default of their own, so one given
    before the command is not overwritten.
    """

    def __init__(self, action: Any, parent: Parser) -> None:
        self._action, self._parent = action, parent

    @classmethod
    def of(cls, parser: Parser) -> Commands:
        _global_flags(parser, default=None)
        return cls(parser.add_subparsers(dest="command", required=True, parser_class=Parser), parser)

    def add(
        self,
        name: str,
        handler: Handler | None,
        *,
        settings: bool = True,
        flags: Callable[[Parser], None] | None = None,
        **kwargs: Any,
    ) -> Parser:
        """A command's parser; ``handler`` runs it (None: it has subcommands, which have their own).

        ``settings=False``: the command needs no configuration (a shell's start-up must not fail on it).
        ``flags``: adds the command's flags when the command is parsed (:meth:`Parser.later`).
        """
        parser: Parser = self._action.add_parser(name, **kwargs)
        _global_flags(parser, default=argparse.SUPPRESS)
        self._parent.subcommands[name] = parser
        if handler is not None:
            parser.set_defaults(handler=handler, needs_settings=settings)
        if flags is not None:
            parser.later(flags)
        return parser

    def nested(self, parser: Parser, **options: Any) -> Commands:
        """Subcommands of a command (``index crds``), taking the global flags as well."""
        return Commands(parser.add_subparsers(parser_class=Parser, **options), parser)


def output_flag(parser: argparse.ArgumentParser, *, formats: tuple[str, ...] = FORMATS) -> None:
    parser.add_argument("-o", "--output", choices=formats, default=formats[0], help="output format")


def configuration_errors(exc: ValidationError) -> str:
    """Each problem as ``KUBEVEC_<FIELD>: message``, without the values given.

    pydantic's own text repeats the input, and for a check across fields that is every field of the
    section: a password in the url or an API key would be printed with it.
    """
    lines = []
    for error in exc.errors(include_input=False, include_url=False):
        where = "__".join(str(part) for part in error["loc"] if not isinstance(part, int)).upper()
        lines.append(f"KUBEVEC_{where}: {error['msg']}" if where else str(error["msg"]))
    return "; ".join(lines)


def open_store(settings: Settings, *, existing: bool = False, follow: bool = False) -> VectorStore:
    """The configured store; ``existing``: readers refuse to create a local store that is not there.

    ``follow``: a long-lived reader (``kubevec mcp``) keeps up with what another process writes to an
    embedded store (see :func:`kubevec.backends.factory.open_store`).
    """
    from kubevec.backends.factory import open_store

    local = settings.store.local_path
    if existing and local is not None and not local.exists():
        raise CommandError(
            f"the {settings.store.backend} store at {local} does not exist: index one first (kubevec run or kubevec index crds), "
            "or point KUBEVEC_STORE__PATH at it"
        )
    return open_store(settings.store, follow=follow)


def open_embedder(settings: Settings) -> Embedder:
    from kubevec.controller.serving import verified_dir
    from kubevec.inference.providers.config import make_embedder

    return make_embedder(settings.embedder, verified_dir=verified_dir(settings))


def search_service(
    settings: Settings, store: VectorStore, *, embedder: bool = False, one_shot: bool = True, audit: bool = False
) -> SearchService:
    """:func:`kubevec.controller.serving.search_service` for a command; ``embedder``: it embeds queries;
    ``audit``: each tool call leaves an audit record (what serves agents: ``kubevec mcp``)."""
    from kubevec.controller.serving import search_service

    return search_service(settings, store, queries=embedder, one_shot=one_shot, audit=audit)


def document_text(document: dict[str, Any], text: str) -> str:
    lines = [f"id: {document['id']}", f"collection: {document['collection']}"]
    lines += [
        f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}"
        for key, value in sorted(document["metadata"].items())
    ]
    return "\n".join([*lines, "", text])


def emit(output: str, data: Any, *, text: str) -> None:
    if output == "json":
        print(json.dumps(data, indent=2, sort_keys=True))
    elif output == "yaml":
        import yaml

        print(yaml.safe_dump(data, sort_keys=True, allow_unicode=True), end="")
    else:
        print(text)


@contextlib.asynccontextmanager
async def reading(settings: Settings, *, embedder: bool = False) -> AsyncIterator[SearchService]:
    """The search service over the configured store, closed after the command: what reading commands use."""
    resident = RESIDENT.get()
    if resident is not None:
        yield resident
        return
    store = open_store(settings, existing=True)
    try:
        yield search_service(settings, store, embedder=embedder)
    finally:
        await store.close()
