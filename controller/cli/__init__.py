"""``kubevec``: the command line. One entry point; heavy imports happen inside each command.

``main.py`` dispatches, ``parser.py`` defines every command and flag, ``common.py`` is what the commands
share (the store, the embedder, the search service over the active generation), and each other module is
one command or a family of them.
"""

from kubevec.controller.cli.main import main
from kubevec.controller.cli.parser import build_parser, label_selector

__all__ = ["build_parser", "label_selector", "main"]
