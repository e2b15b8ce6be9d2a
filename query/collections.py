"""The active collections: which physical collection (generation) serves each logical one now.

A migration switches generations under a long-lived reader (the MCP server, a resident reader), so
the names (and the query embedder that built them) are read through ``refresh`` at most every
``refresh_seconds``, and again at once when a collection has gone.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from kubevec.core.errors import CollectionNotFound, SearchError
from kubevec.inference.providers.embedders.base import Embedder

T = TypeVar("T")

Refresh = Callable[[], Awaitable[tuple[Mapping[str, str], Embedder | None]]]


class ActiveCollections:
    """Logical collection names (``capabilities``, ``instances``, ``changes``) to the physical ones, and the
    query embedder that goes with them."""

    def __init__(
        self,
        *,
        names: Mapping[str, str],
        embedder: Embedder | None,
        refresh: Refresh | None,
        refresh_seconds: float,
    ) -> None:
        self.names = dict(names)
        self.embedder = embedder
        self._refresh = refresh
        self.refresh_seconds = refresh_seconds
        self._refreshed = -math.inf

    def begin_call(self) -> None:
        """Read the names afresh at the next read (a resident process's next caller)."""
        self._refreshed = -math.inf

    async def fresh(self, *, force: bool = False) -> None:
        """Re-read the active collections when they may have changed (see the module docstring)."""
        if self._refresh is None or (not force and time.monotonic() - self._refreshed < self.refresh_seconds):
            return
        names, embedder = await self._refresh()
        self.names = dict(names)
        if embedder is not None:
            self.embedder = embedder
        self._refreshed = time.monotonic()

    def name(self, collection: str) -> str:
        """The physical name of ``collection``; an unknown one is the caller's error."""
        if collection not in self.names:
            raise SearchError(f"Unknown collection {collection!r}; use one of {', '.join(sorted(self.names))}")
        return self.names[collection]

    async def retrying(self, read: Callable[[], Awaitable[T]]) -> T:
        """``read``, once more with fresh names when its collection has gone (switched generations since
        the names were read); a reader that cannot refresh lets the error through."""
        try:
            return await read()
        except CollectionNotFound:
            if self._refresh is None:
                raise
            await self.fresh(force=True)
            return await read()
