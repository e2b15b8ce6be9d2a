"""The two collections every store holds, by name: a module of its own, so naming them costs nothing.

The command line builds its ``--collection`` choices from these before it knows which command runs;
importing them from :mod:`kubevec.inference.documents` would also load the gate's rules.
"""

from __future__ import annotations

from typing import Final, Literal

CAPABILITIES: Final = "capabilities"
INSTANCES: Final = "instances"
Collection = Literal["capabilities", "instances"]
COLLECTIONS: Final[tuple[Collection, ...]] = (CAPABILITIES, INSTANCES)
