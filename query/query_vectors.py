"""A question's vector, and what is known of the query embedder's health.

After the embedder failed, questions go straight to keywords for ``EMBEDDER_DOWN_SECONDS`` (each
would otherwise wait out its retries), then try it again; the answer says it was degraded.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Final

from kubevec.backends import VectorStore
from kubevec.core.errors import EmbedderError, SearchError
from kubevec.query.collections import ActiveCollections

logger = logging.getLogger("kubevec.query.search")

#: How long a query may wait for its vector (the embedder's own retries can take a minute).
QUERY_EMBED_TIMEOUT: Final = 10.0
#: After the embedder failed, queries go straight to keywords for this long, then try it again.
EMBEDDER_DOWN_SECONDS: Final = 30.0


class QueryVectors:
    """Embeds questions with the active embedder, within ``timeout``; remembers when it failed."""

    def __init__(self, *, active: ActiveCollections, timeout: float = QUERY_EMBED_TIMEOUT) -> None:
        self.active = active
        self.timeout = timeout
        #: Until when queries skip the embedder after it failed (monotonic): each would wait its retries.
        self.down_until = -math.inf
        self.down_reason = ""
        self._checked: set[str] = set()

    def begin_call(self) -> None:
        """Try the embedder afresh (a resident process's next caller)."""
        self.down_until = -math.inf

    @property
    def up(self) -> bool:
        return time.monotonic() >= self.down_until

    def failed(self) -> None:
        self.down_until = time.monotonic() + EMBEDDER_DOWN_SECONDS

    async def check(self, store: VectorStore, name: str) -> None:
        """The collection was built by this embedder (once per collection, not on every query)."""
        embedder = self.active.embedder
        if embedder is None:
            raise SearchError("Semantic search needs an embedder; use keyword or filter search instead")
        if name in self._checked:
            return
        info = await store.collection_info(name)
        if info is not None and info.embedder and info.embedder != embedder.name:
            raise SearchError(
                f"Collection {name!r} was built with embedder {info.embedder!r}, "
                f"but this search uses {embedder.name!r}; configure the same embedder, or move the "
                "store to this one with kubevec migrate"
            )
        self._checked.add(name)

    async def vector(self, query: str) -> list[float] | None:
        """The query's vector; None when the embedder failed now or moments ago."""
        embedder = self.active.embedder
        assert embedder is not None
        if not self.up:
            return None
        try:
            return await asyncio.wait_for(embedder.embed_query(query), timeout=self.timeout)
        except (EmbedderError, TimeoutError) as exc:
            reason = exc.reason if isinstance(exc, EmbedderError) else "timeout"
            self.failed()
            self.down_reason = reason
            logger.warning(
                "Answering from keywords alone: the embedder failed reason=%s retry_in=%.0fs error=%s",
                reason,
                EMBEDDER_DOWN_SECONDS,
                str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
            )
            return None
