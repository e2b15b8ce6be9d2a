"""How deep ``[`` and ``{`` nest in a text, found before a parser recurses into it.

The one JSON depth guard. Python's ``json`` module and PyYAML recurse once per level, so a hostile
document a few kilobytes long raises ``RecursionError`` (or takes the stack) before any check on the
parsed value could run. A linear scan of the brackets, which never recurses, refuses it first.
"""

from __future__ import annotations

import re
from typing import Final

#: JSON strings (whose brackets are text) and the brackets outside them.
_JSON_TOKENS: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_BRACKETS: Final = re.compile(r"[\[\]{}]")


def json_too_deep(text: str, *, limit: int, strings: bool = True) -> bool:
    """Whether ``[``/``{`` nest deeper than ``limit`` in ``text``.

    ``strings=True`` (JSON text): brackets inside a string do not count. ``strings=False`` (text that may be
    YAML, or JSON inside other text): every bracket counts, and a stray closer never takes the count below
    zero, so the answer may over-estimate (which only costs the parse it spares) but never under-estimates,
    whatever the quoting. In JSON text a stray closer is an error the parser stops at before going deeper.
    """
    depth = 0
    if strings:
        for match in _JSON_TOKENS.finditer(text):
            token = match.group()
            if token in "{[":
                depth += 1
                if depth > limit:
                    return True
            elif token in "}]":
                depth -= 1
        return False
    for match in _BRACKETS.finditer(text):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(0, depth - 1)
    return False
