"""The one cursor codec: a JSON body as URL-safe base64 without padding, read back with a bound.

Every paged answer (filter listings, keyword pages, the change listing) hands its caller an opaque
cursor and reads it back; what a cursor holds is each listing's own, how it is written is this.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kubevec.query.request import MAX_CURSOR


def encode(body: str) -> str:
    """``body`` (JSON text) as a cursor."""
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def decode(cursor: str) -> Any:
    """The JSON a cursor holds; ``ValueError`` (or ``RecursionError`` on a hostile body) when it is not one."""
    if len(cursor) > MAX_CURSOR:
        raise ValueError("too long")
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
