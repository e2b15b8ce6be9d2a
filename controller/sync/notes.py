"""What an LLM says a workload's software is, asked once per pod template, in the background.

``KUBEVEC_DESCRIBER__LLM__WORKLOADS``: documents say ``images: ghcr.io/acme/jaeger-query:1.57`` and a
small embedding model cannot tell that this is a trace UI. Asking an LLM while a document is built
would hold the sync up behind a rate-limited API, so a workload is first written without the note
(its ``built_from`` ends in ``/pending``); :class:`WorkloadNotes` asks in the background (one
request per distinct template facts, however many objects share them) and hands the objects back
when the answer is there, to be read again and rebuilt with a ``does:`` line. What a killed
controller did not rebuild, the next start does: a pending ``built_from`` never matches. Answers are cached on disk by the describer, so a restart or a new
replica of a template asks nothing: the note is there when the document is first built, and the
text (hence the vector) is the same as before the restart.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from typing import Final

import httpx
from pydantic import ValidationError

from kubevec.core.bounded import LRU
from kubevec.core.clock import SYSTEM_CLOCK, Clock
from kubevec.core.errors import LLMError
from kubevec.inference.providers.llm import LLMDescriber

logger = logging.getLogger(__name__)

#: Distinct templates waiting for an answer; past this the newest wait for the next resync to ask.
MAX_WAITING: Final = 10_000
#: Objects remembered per template to rebuild when the answer comes (the resync reaches the rest).
MAX_OBJECTS_PER_TEMPLATE: Final = 64
#: Answers kept in memory (the disk cache keeps them all).
MAX_KNOWN: Final = 50_000
#: Seconds before a template whose request failed is asked about again.
RETRY_AFTER: Final = 3600.0
#: What the LLM answers when the facts do not tell: cached, and no line is written.
UNKNOWN: Final = "unknown"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Described:
    """An object waiting for its template's note: what reading it again needs."""

    uid: str
    api_version: str
    kind: str
    name: str
    namespace: str | None


class WorkloadNotes:
    """Notes by template facts, from memory or the describer's disk cache, and the requests for missing ones."""

    def __init__(
        self,
        *,
        describer: LLMDescriber,
        on_noted: Callable[[list[Described]], None],
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._describer = describer
        self._on_noted = on_noted
        self._clock = clock
        #: facts -> the note ("" when the LLM said it cannot tell).
        self._known: LRU[str, str] = LRU(MAX_KNOWN)
        self._waiting: dict[str, list[Described]] = {}
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._failed: LRU[str, float] = LRU(MAX_WAITING)

    def get(self, facts: str) -> str | None:
        """The note for these facts if the LLM was asked already (memory, then the disk cache)."""
        if (known := self._known.get(facts)) is not None:
            return known or None
        cached = self._describer.cached_workload(facts)
        if cached is None:
            return None
        self._known[facts] = "" if _unknown(cached.software) else cached.software
        return self._known[facts] or None

    def want(self, facts: str, *, described: Described) -> bool:
        """Ask about these facts (once) and rebuild ``described`` when the answer comes.

        False when there is nothing to wait for (the LLM said it cannot tell); True while a note may
        still come, asked now, waiting in line, or to be asked again after a failure."""
        if facts in self._known:
            return False  # answered "unknown": nothing to add
        failed_at = self._failed.get(facts)
        if failed_at is not None and self._clock.monotonic() - failed_at < RETRY_AFTER:
            return True
        waiting = self._waiting.get(facts)
        if waiting is None:
            if len(self._waiting) >= MAX_WAITING:
                return True  # the next build of the object asks
            self._waiting[facts] = waiting = []
            self._queue.put_nowait(facts)
        if len(waiting) < MAX_OBJECTS_PER_TEMPLATE and all(d.uid != described.uid for d in waiting):
            waiting.append(described)
        return True

    @property
    def pending(self) -> int:
        return len(self._waiting)

    async def run(self) -> None:
        """Ask about each waiting template in turn (the describer keeps to its request budget)."""
        while True:
            facts = await self._queue.get()
            try:
                note = await self._describer.describe_workload(facts)
            except (LLMError, httpx.HTTPError, ValidationError, ValueError) as exc:
                self._failed[facts] = self._clock.monotonic()
                objects = self._waiting.pop(facts, [])
                logger.warning(
                    "Could not describe a workload, will ask again after=%.0fs objects=%d error=%s",
                    RETRY_AFTER,
                    len(objects),
                    f"{type(exc).__name__}: {exc}"[:300],
                )
                continue
            self._known[facts] = "" if _unknown(note.software) else note.software
            objects = self._waiting.pop(facts, [])
            if self._known[facts] and objects:
                logger.info("Described a workload template objects=%d", len(objects))
                self._on_noted(objects)


def _unknown(software: str) -> bool:
    return software.strip().strip(".").lower() == UNKNOWN
