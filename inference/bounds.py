"""Hard bounds on the work one object may cost, so a hostile object is skipped and named, never a stalled sync.

Every builder walks an object once (the redactor) and then reads parts of what survived. Python's
recursion, ``json``'s and ``yaml``'s parsers and a backtracking regex each turn a crafted value into
an exception or minutes of CPU: a 10 KB string of nested brackets raised ``RecursionError`` out of
the redactor and failed every full resync. So the walk carries a :class:`Budget`:

- **depth**: values nested deeper than :data:`MAX_DEPTH` are cut (replaced by :data:`CUT`); no
  document reads that deep, and no recursion here goes deeper.
- **length**: a string longer than :data:`MAX_STRING_CHARS` is judged on its first part only (cut at
  a space, so no token is split in half); documents show at most a few hundred characters of it.
- **nodes and time**: :data:`MAX_NODES` values and :data:`MAX_SECONDS` of wall time per object; past
  either, :class:`TooComplex` names the object and the bound, and the builder skips it.

Every regex that judges values is linear in its input (bounded repetitions where a pattern could
otherwise rescan the rest of the string from each start), so time grows with an object's size,
and the bounds hold what no rule foresaw.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Final

from kubevec.core.errors import TooComplex

MAX_DEPTH: Final = 48
MAX_STRING_CHARS: Final = 32_768
MAX_NODES: Final = 250_000
MAX_SECONDS: Final = 2.0
#: What a value past a bound reads as.
CUT: Final = "<cut>"


@dataclasses.dataclass(kw_only=True)
class Budget:
    """What is left of one object's allowance; checked as the redactor walks it."""

    nodes: int = MAX_NODES
    deadline: float = dataclasses.field(default_factory=lambda: time.monotonic() + MAX_SECONDS)
    seconds: float = MAX_SECONDS

    def spend(self, nodes: int = 1) -> None:
        """Count ``nodes`` values walked; raises :class:`TooComplex` past the node or time bound."""
        self.nodes -= nodes
        if self.nodes < 0:
            raise TooComplex(f"more than {MAX_NODES} values", reason="nodes")
        if self.nodes % 512 == 0 and time.monotonic() > self.deadline:
            raise TooComplex(f"took more than {self.seconds:g}s to judge", reason="time")


def cut_string(value: str, *, limit: int = MAX_STRING_CHARS) -> str:
    """``value`` up to ``limit`` characters, cut back to a space so no token is kept in part."""
    if len(value) <= limit:
        return value
    head = value[:limit]
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return (head[:space] if space > limit // 2 else "") + " " + CUT
