"""Hubs: documents near every question, and the centring that stops them winning questions not about them.

A small embedding model puts short, generic documents (a Namespace, an autoscaler whose only words are
"no metrics", a default account) near the middle of its space, so they come close to every question and
rank high for questions about something else. Centring the similarity on the collection's mean vector
``m`` (Suzuki et al., "Centering similarity measures to reduce hubs", EMNLP 2013) removes that: a
document ``d`` is ranked for a question ``q`` by ``<q - m, d - m>``, which, ``q`` and ``m`` fixed, orders as
``<q, d> - <d, m>``. One measured statistic, no weight: a document as near the middle as to the question
gains nothing from the question.

The mean is estimated from up to :data:`SAMPLE` vectors of the collection and read again when the
collection was written (its write stamp) and :data:`FRESH_SECONDS` have passed: it moves slowly, so
answers use the mean they have while it is read again behind them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Final

import numpy as np

from kubevec.backends import Hit, VectorStore

logger = logging.getLogger(__name__)

#: Vectors read to estimate a collection's mean (a mean settles long before 2,000).
SAMPLE: Final = 2000
#: Decimals a centred score keeps: differences below this are the store's float noise, not meaning.
ROUNDING: Final = 6
FRESH_SECONDS: Final = 60.0


@dataclasses.dataclass
class Centre:
    """The mean vector of one collection, as last estimated."""

    stamp: str | None = None
    read_at: float = 0.0
    mean: np.ndarray | None = None
    #: one estimate at a time: agents asking at once when the mean expires wait for one read, not each do it
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)
    #: the estimate running behind the answers while they use the mean they have
    refresh: asyncio.Task[np.ndarray | None] | None = None


@dataclasses.dataclass
class Centres:
    """Each collection's mean vector, estimated on first use and kept while it is fresh."""

    _by_name: dict[str, Centre] = dataclasses.field(default_factory=dict)

    async def of(self, store: VectorStore, name: str) -> np.ndarray | None:
        """The mean; the first question waits for it, later ones use the one they have while a stale one is
        estimated again behind them (2,000 vectors cost 0.5 s at 100,000 documents: no question should wait)."""
        centre = self._by_name.setdefault(name, Centre())
        if centre.mean is None:
            async with centre.lock:
                return await self._estimate(store, name, centre=centre)
        if time.monotonic() - centre.read_at >= FRESH_SECONDS and centre.refresh is None:
            centre.refresh = asyncio.create_task(self._refresh(store, name, centre=centre))
        return centre.mean

    async def _refresh(self, store: VectorStore, name: str, *, centre: Centre) -> np.ndarray | None:
        try:
            async with centre.lock:
                return await self._estimate(store, name, centre=centre)
        except Exception as exc:  # the store is down: keep the mean there is, try again when it is stale
            logger.warning("Kept the collection mean collection=%s reason=%s", name, type(exc).__name__)
            centre.read_at = time.monotonic()
            return centre.mean
        finally:
            centre.refresh = None

    @staticmethod
    async def _estimate(store: VectorStore, name: str, *, centre: Centre) -> np.ndarray | None:
        now = time.monotonic()
        if centre.mean is not None and now - centre.read_at < FRESH_SECONDS:
            return centre.mean  # estimated while this caller waited for the lock
        stamp = await store.stamp(name)
        if centre.mean is not None and stamp is not None and stamp == centre.stamp:
            centre.read_at = now
            return centre.mean
        # in id order and in float64, so the same records give the same mean in every process: centred
        # scores feed a rank fusion, where a last-digit difference between two near scores moves places
        vectors = [r.vector for r in await store.sample(name, limit=SAMPLE) if r.vector]
        centre.mean = np.mean(np.asarray(vectors, dtype=np.float64), axis=0) if vectors else None
        centre.stamp, centre.read_at = stamp, now
        return centre.mean


async def centred(store: VectorStore, name: str, *, hits: Sequence[Hit], mean: np.ndarray) -> list[Hit]:
    """``hits`` (scored by cosine similarity) in centred order; each keeps its own similarity as score."""
    vectors = {r.id: r.vector for r in await store.get(name, [h.id for h in hits], include_vectors=True)}

    def key(pair: tuple[int, Hit]) -> tuple[float, int]:
        at, hit = pair
        vector = vectors.get(hit.id)
        nearness = float(np.dot(np.asarray(vector, dtype=np.float64), mean)) if vector else 0.0
        return (-round(hit.score - nearness, ROUNDING), at)  # a store's float noise never reorders

    return [hit for _, hit in sorted(enumerate(hits), key=key)]
