"""``kubevec completion bash|zsh``: shell completion of commands, flags and their choices, from the parser itself.

Generated from :func:`~kubevec.controller.cli.parser.build_parser` each time, so a new flag completes without
anyone editing a script: ``source <(kubevec completion bash)``.
"""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands

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

    parser = build_parser()
    top_flags = _flags(parser)
    subcommands: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            subcommands.update(action.choices)
    choices: dict[str, set[str]] = {}
    lines = []
    for name, sub in sorted(subcommands.items()):
        words = sorted({*_flags(sub), *_nested(sub)})
        lines.append(f'        {name}) COMPREPLY=($(compgen -W {shlex.quote(" ".join(words))} -- "$cur")) ;;')
        for action in sub._actions:
            if action.choices and action.option_strings and not isinstance(action, argparse._SubParsersAction):
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
        top=shlex.quote(" ".join(sorted({*subcommands, *top_flags}))),
    )


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]


def _nested(parser: argparse.ArgumentParser) -> list[str]:
    return [
        name for action in parser._actions if isinstance(action, argparse._SubParsersAction) for name in action.choices
    ]
