"""``kubevec completion bash|zsh``: shell completion of commands, flags and their choices, from the parser itself.

Generated from :func:`~kubevec.controller.cli.parser.build_parser` each time, so a new flag completes without
anyone editing a script: ``source <(kubevec completion bash)``. What the parser holds is read from its
record (:class:`~kubevec.controller.cli.common.Parser`: the actions ``add_argument`` returned, the
subcommands :class:`~kubevec.controller.cli.common.Commands` made), not from argparse's private lists.
"""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands, Parser

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings

_TEMPLATE = """# kubevec shell completion: source <(kubevec completion {shell})
{preamble}_kubevec() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" command="" word
    for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        case "$word" in -*) ;; *) command="$word"; break ;; esac
    done
    case "$prev" in
{choices}
    esac
    case "$command" in
{commands}
        *) COMPREPLY=($(compgen -W {top} -- "$cur")) ;;
    esac
}}
complete -o default -F _kubevec kubevec
"""


def register(commands: Commands) -> None:
    completion = commands.add(
        "completion",
        completion_command,
        settings=False,
        help="print a shell completion script: source <(kubevec completion bash)",
    )
    completion.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete in")


def completion_command(args: argparse.Namespace, settings: Settings | None) -> int:
    print(script(args.shell), end="")
    return 0


def script(shell: str) -> str:
    from kubevec.controller.cli.parser import build_parser  # the parser lists this module

    parser = build_parser().complete(nested=True)
    subcommands = parser.subcommands
    choices: dict[str, set[str]] = {}
    lines = []
    for name, sub in sorted(subcommands.items()):
        words = sorted({*_flags(sub), *sub.subcommands})
        lines.append(f'        {name}) COMPREPLY=($(compgen -W {shlex.quote(" ".join(words))} -- "$cur")) ;;')
        for action in sub.recorded:
            if action.choices and action.option_strings:
                for flag in action.option_strings:
                    choices.setdefault(flag, set()).update(str(c) for c in action.choices)
    choice_lines = [
        f'        {flag}) COMPREPLY=($(compgen -W {shlex.quote(" ".join(sorted(values)))} -- "$cur")); return ;;'
        for flag, values in sorted(choices.items())
    ]
    preamble = "autoload -U +X bashcompinit && bashcompinit\n" if shell == "zsh" else ""
    return _TEMPLATE.format(
        shell=shell,
        preamble=preamble,
        choices="\n".join(choice_lines),
        commands="\n".join(lines),
        top=shlex.quote(" ".join(sorted({*subcommands, *_flags(parser)}))),
    )


def _flags(parser: Parser) -> list[str]:
    return [flag for action in parser.recorded for flag in action.option_strings if flag.startswith("--")]
