"""``kubevec``: parse, load the settings once, run one command, and report its failure on one line."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError

from kubevec.controller.cli.bench import bench_command
from kubevec.controller.cli.clusters import clusters_command, forget_command
from kubevec.controller.cli.common import configuration_errors
from kubevec.controller.cli.index import describe, index_command
from kubevec.controller.cli.mcp import mcp_command
from kubevec.controller.cli.migrate import migrate_command
from kubevec.controller.cli.parser import build_parser
from kubevec.controller.cli.run import run
from kubevec.controller.cli.search import (
    changes_command,
    facets_command,
    get_command,
    related_command,
    resolve_command,
    search_command,
)
from kubevec.controller.cli.status import status_command
from kubevec.controller.settings import Settings
from kubevec.core.errors import CommandError, EmbedderError

if TYPE_CHECKING:
    pass

logger = logging.getLogger("kubevec")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "completion":  # no settings needed: a shell's start-up must not fail on them
        from kubevec.controller.cli.completion import script

        print(script(args.shell), end="")
        return 0
    try:
        settings = Settings()
    except ValidationError as exc:
        print(f"kubevec: invalid configuration: {configuration_errors(exc)}", file=sys.stderr)
        return 2
    flags = {"kubeconfig": args.kubeconfig, "kube_context": args.context}
    if args.command == "run":
        flags["namespace"] = args.namespace
    settings = settings.model_copy(update={key: value for key, value in flags.items() if value is not None})
    from kubevec.controller.runtime.logs import install

    install(level=settings.log_level, format=settings.log_format)
    try:
        if args.command == "run":
            return run(args, settings)
        if args.command == "describe":
            return describe(args, settings)
        if args.command == "index":
            return asyncio.run(index_command(args, settings))
        if args.command == "search":
            return asyncio.run(search_command(args, settings))
        if args.command == "mcp":
            return mcp_command(args, settings)
        if args.command == "status":
            return asyncio.run(status_command(args, settings))
        if args.command == "get":
            return asyncio.run(get_command(args, settings))
        if args.command == "resolve":
            return asyncio.run(resolve_command(args, settings))
        if args.command == "facets":
            return asyncio.run(facets_command(args, settings))
        if args.command == "related":
            return asyncio.run(related_command(args, settings))
        if args.command == "changes":
            return asyncio.run(changes_command(args, settings))
        if args.command == "clusters":
            return asyncio.run(clusters_command(args, settings))
        if args.command == "forget-cluster":
            return asyncio.run(forget_command(args, settings))
        if args.command == "migrate":
            return asyncio.run(migrate_command(args, settings))
        if args.command == "bench":
            return bench_command(args, settings)
    except CommandError as exc:
        print(f"kubevec {args.command}: {exc}", file=sys.stderr)
        return 1
    except EmbedderError as exc:  # a wrong key, a 500, a timeout, a closed port: one line, never a traceback
        print(f"kubevec {args.command}: the embedder failed ({exc.reason}): {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `kubevec ... | head`: the reader is gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    raise AssertionError(f"unhandled command {args.command}")  # pragma: no cover
