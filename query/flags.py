"""How a field of a declared request reads on the command line (``kubevec.controller.cli.request_flags``).

Here, beside the requests and apart from argparse, so a request can say it without the query layer
knowing the command line.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, kw_only=True)
class Flag:
    """How a field of a request reads on the command line, where that differs from its MCP parameter.

    The MCP description speaks to an agent; the flag's help to a person at a shell, in the words
    ``kubevec <command> --help`` has always printed. A field without one is ``--field-name`` with
    its description as help (``kubevec search``'s fields).
    """

    #: The flag's help (None: the field's description).
    help: str | None = None
    #: Its spellings (empty: ``-n``/``-k`` as kubectl spells them, else ``--field-name``).
    names: tuple[str, ...] = ()
    #: A positional argument; ``optional``: one that may be left out.
    positional: bool = False
    optional: bool = False
    #: The command does not offer this field (its default applies).
    hidden: bool = False
    #: The flag takes text the request reads itself (``2h`` for a time held as seconds).
    text: bool = False
