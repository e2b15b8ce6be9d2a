"""The tool table: every read-side tool once, as its declared request, its reader and its command.

The MCP server's tools, the CLI's reading commands, the scoped reader (``ScopedSearch.read``) and
the names the controller's metrics label by are all derived from :data:`TOOLS`. A new tool is its
request (a pydantic model: its fields, bounds and descriptions become the MCP tool's parameters and
the command's flags) with its reader (``readers/``), and a :class:`Tool` line in :data:`TOOLS`; the
MCP tool and the command are generated (``kubevec.query.mcp.tools``, ``kubevec.controller.cli.search``)
unless one is written out to present its answer its own way.

Importing this module loads no MCP SDK, no argparse and no reader: ``kubevec --help`` lists the
commands from here, and a reader (with the gate behind it) is imported on its first call (:func:`lazy`).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from pydantic import ValidationError

from kubevec.core.errors import SearchError
from kubevec.query.changes import ChangesRequest
from kubevec.query.request import SearchRequest, describe
from kubevec.query.tool_commands import COMMANDS
from kubevec.query.tool_requests import (
    CLUSTER,
    DocumentRequest,
    FacetsRequest,
    KindRequest,
    RelatedRequest,
    ToolRequest,
)

if TYPE_CHECKING:
    from kubevec.query.answers import Answer, Result
    from kubevec.query.changes import Changes
    from kubevec.query.related import Related
    from kubevec.query.sources import Sources
    from kubevec.query.views import View

__all__ = [
    "CLUSTER",
    "ChangesRequest",
    "DocumentRequest",
    "FacetsRequest",
    "KindRequest",
    "RelatedRequest",
    "SearchRequest",
    "ToolRequest",
]

R = TypeVar("R")
A = TypeVar("A")

#: What a reader is: the sources, the request, the caller's view (None: everything) -> the answer.
Reader = Callable[["Sources", R, "View | None"], Awaitable[A]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Tool(Generic[R, A]):
    """One tool: what it is called, what it is asked (its request), who answers (its reader), its command."""

    #: The MCP tool's name (and the label of its calls in the controller's metrics).
    name: str
    #: The declared request: a pydantic model whose fields are the tool's parameters and the command's flags.
    request: type[R]
    #: Its answer as one caller (``view``; None: everything) sees it.
    read: Reader[R, A]
    #: The CLI command that runs it, and that command's one line in ``kubevec --help``.
    command: str
    help: str
    #: What an agent reads about the tool (the MCP description), when no written-out tool says it.
    description: str = ""


def lazy(module: str, function: str) -> Reader[Any, Any]:
    """The reader ``module.function``, imported on its first call (readers load the gate; the table does not)."""

    async def read(sources: Sources, request: Any, view: View | None) -> Any:
        reader: Reader[Any, Any] = getattr(importlib.import_module(module), function)
        return await reader(sources, request, view)

    read.__name__ = read.__qualname__ = function
    return read


_READERS: Final = "kubevec.query.readers.table"

VECTOR_SEARCH: Final[Tool[SearchRequest, Answer]] = Tool(
    name="vector_search",
    request=SearchRequest,
    read=lazy(_READERS, "search"),
    command="search",
    help=COMMANDS["search"],
)
GET_DOCUMENT: Final[Tool[DocumentRequest, tuple[Result, str] | None]] = Tool(
    name="get_document",
    request=DocumentRequest,
    read=lazy(_READERS, "document"),
    command="get",
    help=COMMANDS["get"],
)
RESOLVE_KIND: Final[Tool[KindRequest, list[dict[str, Any]]]] = Tool(
    name="resolve_kind",
    request=KindRequest,
    read=lazy(_READERS, "kinds"),
    command="resolve",
    help=COMMANDS["resolve"],
)
RELATED: Final[Tool[RelatedRequest, Related]] = Tool(
    name="related",
    request=RelatedRequest,
    read=lazy(_READERS, "related"),
    command="related",
    help=COMMANDS["related"],
)
LIST_FACETS: Final[Tool[FacetsRequest, dict[str, int]]] = Tool(
    name="list_facets",
    request=FacetsRequest,
    read=lazy(_READERS, "facets"),
    command="facets",
    help=COMMANDS["facets"],
)
LIST_CHANGES: Final[Tool[ChangesRequest, Changes]] = Tool(
    name="list_changes",
    request=ChangesRequest,
    read=lazy("kubevec.query.readers.changes", "changes"),
    command="changes",
    help=COMMANDS["changes"],
)

#: Every tool, in the order MCP clients list them and ``kubevec --help`` lists their commands.
TOOLS: tuple[Tool[Any, Any], ...] = (VECTOR_SEARCH, GET_DOCUMENT, RESOLVE_KIND, RELATED, LIST_FACETS, LIST_CHANGES)


def names() -> tuple[str, ...]:
    """Every tool's name (what the controller's metrics label), from the table as it is now."""
    return tuple(tool.name for tool in TOOLS)


def by_name(name: str) -> Tool[Any, Any]:
    for tool in TOOLS:
        if tool.name == name:
            return tool
    raise SearchError(f"Unknown tool {name!r}; use one of {', '.join(names())}")


def by_command(command: str) -> Tool[Any, Any]:
    """The tool a CLI command runs."""
    for tool in TOOLS:
        if tool.command == command:
            return tool
    raise SearchError(f"Unknown command {command!r}")


def build(model: type[Any], fields: Mapping[str, Any]) -> Any:
    """``fields`` validated into ``model``; every problem in one :class:`SearchError` line."""
    try:
        return model(**fields)
    except ValidationError as exc:
        raise SearchError(describe(exc)) from None
