"""``kubevec``: the command line. One entry point; heavy imports happen inside each command.

``main.py`` runs a command and maps its errors, ``resident.py`` hands a reading command to a warm
process when one is running, ``parser.py`` lists the command modules, each of which registers its
own commands and flags (``register``), ``common.py`` is what they share, and ``request_flags.py``
derives ``kubevec search``'s flags from the search request.

The parser is imported only when asked for: importing it imports every command module, which a
command the resident process answers never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubevec.controller.cli.main import main

if TYPE_CHECKING:
    from kubevec.controller.cli.parser import build_parser

__all__ = ["build_parser", "main"]


def __getattr__(name: str) -> Any:
    if name == "build_parser":
        from kubevec.controller.cli.parser import build_parser

        return build_parser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
