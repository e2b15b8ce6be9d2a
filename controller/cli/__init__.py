"""``kubevec``: the command line. One entry point; heavy imports happen inside each command.

``main.py`` runs a command and maps its errors, ``parser.py`` lists the command modules, each of which
registers its own commands and flags (``register``), ``common.py`` is what they share, and
``request_flags.py`` derives ``kubevec search``'s flags from the search request.
"""

from kubevec.controller.cli.main import main
from kubevec.controller.cli.parser import build_parser

__all__ = ["build_parser", "main"]
