"""``kubevec``: parse, load the settings once, run the command, and report a failure on one line.

The one error mapping of the command line: a :class:`~kubevec.core.errors.KubevecError` is one line
on stderr and exit 1 (a command's own :class:`~kubevec.core.errors.CommandError` as it wrote it, any
other by its first line); anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from kubevec.controller.cli.common import configuration_errors
from kubevec.controller.cli.parser import build_parser
from kubevec.controller.settings import Settings
from kubevec.core.errors import CommandError, KubevecError, ModelError


def one_line(exc: KubevecError) -> str:
    """What the command line says of an error: a command's own words, else the first line (and which model)."""
    if isinstance(exc, CommandError):
        return str(exc)
    if isinstance(exc, ModelError):  # a wrong key, a 500, a timeout, a closed port
        return f"the {exc.role} failed ({exc.reason}): {exc.first_line()}"
    return exc.first_line()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = None
    if args.needs_settings:
        try:
            settings = Settings()
        except ValidationError as exc:
            print(f"kubevec: invalid configuration: {configuration_errors(exc)}", file=sys.stderr)
            return 2
        flags = {"kubeconfig": args.kubeconfig, "kube_context": args.context}
        settings = settings.model_copy(update={key: value for key, value in flags.items() if value is not None})
        from kubevec.controller.runtime.logs import install

        install(level=settings.log_level, format=settings.log_format)
    try:
        outcome = args.handler(args, settings)
        code: int = asyncio.run(outcome) if inspect.iscoroutine(outcome) else outcome
        return code
    except KubevecError as exc:
        print(f"kubevec {args.command}: {one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `kubevec ... | head`: the reader is gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
