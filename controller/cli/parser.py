"""The command line's parser: the global flags, and every command as its own module registers it.

A new command is a module with a ``register(commands)`` function and a line in :data:`COMMANDS`.
"""

from __future__ import annotations

from typing import Final

from kubevec.controller.cli import bench, clusters, completion, index, mcp, migrate, resident, run, search, status
from kubevec.controller.cli.common import Commands, Parser
from kubevec.core.version import kubevec_version

#: Every command module, in the order ``kubevec --help`` lists their commands.
COMMANDS: Final = (run, index, search, status, clusters, migrate, mcp, resident, bench, completion)


def build_parser() -> Parser:
    parser = Parser(prog="kubevec", description="Keep a vector database in sync with Kubernetes.")
    parser.add_argument("--version", action="version", version=f"kubevec {kubevec_version()}")
    commands = Commands.of(parser)
    for module in COMMANDS:
        module.register(commands)
    return parser
