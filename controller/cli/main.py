"""``kubevec``: parse, load the settings once, run the command, and report a failure on one line.

The one error mapping of the command line: a :class:`~kubevec.core.errors.KubevecError` is one line
on stderr and exit 1 (a command's own :class:`~kubevec.core.errors.CommandError` as it wrote it, any
other by its first line); anything else is a bug and keeps its traceback.

A reading command is first offered to the resident reader (:mod:`~kubevec.controller.cli.resident`),
before anything heavy is imported: this module imports only the standard library and ``core`` at
its top, the parser, pydantic and the settings when a command runs here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kubevec.controller.cli import resident
from kubevec.core.errors import CommandError, KubevecError, ModelError

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings


def one_line(exc: KubevecError) -> str:
    """What the command line says of an error: a command's own words, else the first line (and which model)."""
    if isinstance(exc, CommandError):
        return str(exc)
    if isinstance(exc, ModelError):  # a wrong key, a 500, a timeout, a closed port
        return f"the {exc.role} failed ({exc.reason}): {exc.first_line()}"
    return exc.first_line()


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    answered = resident.ask(arguments)
    if answered is not None:
        return answered
    code, settings = run_here(arguments)
    if code == 0 and settings is not None and settings.store.sharing == "shared":
        # the next reading command with these settings is answered warm; never for a store one process
        # at a time may open (Qdrant local): the reader would hold it and every writer would fail
        resident.start(arguments)
    return code


def run_here(argv: Sequence[str]) -> tuple[int, Settings | None]:
    """Parse, load the settings, run the command in this process: its exit code and the settings it ran with."""
    from kubevec.controller.cli.parser import build_parser

    args = build_parser().parse_args(argv)  # `--help` and usage errors end here, having imported little
    import asyncio
    import inspect

    settings = None
    if args.needs_settings:
        loaded = load_settings(kubeconfig=args.kubeconfig, context=args.context)
        if isinstance(loaded, int):
            return loaded, None
        settings = loaded
        from kubevec.controller.runtime.logs import install

        install(level=settings.log_level, format=settings.log_format)
    try:
        outcome = args.handler(args, settings)
        code: int = asyncio.run(outcome) if inspect.iscoroutine(outcome) else outcome
        return code, settings
    except KubevecError as exc:
        return failed(args, exc), settings
    except KeyboardInterrupt:
        return 130, settings
    except BrokenPipeError:  # `kubevec ... | head`: the reader is gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0, settings


def load_settings(*, kubeconfig: Path | None, context: str | None, base: Settings | None = None) -> Settings | int:
    """The settings from the environment (or ``base``) with the global flags over them; 2 if invalid."""
    from pydantic import ValidationError

    from kubevec.controller.cli.common import configuration_errors
    from kubevec.controller.settings import Settings

    if base is None:
        try:
            base = Settings()
        except ValidationError as exc:
            print(f"kubevec: invalid configuration: {configuration_errors(exc)}", file=sys.stderr)
            return 2
    flags = {"kubeconfig": kubeconfig, "kube_context": context}
    return base.model_copy(update={key: value for key, value in flags.items() if value is not None})


def failed(args: argparse.Namespace, exc: KubevecError) -> int:
    print(f"kubevec {args.command}: {one_line(exc)}", file=sys.stderr)
    return 1
