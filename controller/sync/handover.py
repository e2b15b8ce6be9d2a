"""Start-up lists the cluster once: kopf's first listing of a resource is handed over to the first resync.

Before kopf watches a resource it lists it, and hands every object to the handlers as an event;
the first resync then lists the same objects again to build what the cluster implies. At 20,000
objects that was two full passes of JSON decoding on a restart, plus kopf's per-object machinery
(a worker task per object) for events that built documents the resync built again.

So, while the first resync has not run, kopf's first listing of each resource the resync also
lists asks the API server for one object's metadata: just the resource version its watch starts
from. The resync lists such a resource only after kopf has that resource version, so every change
after the resync's listing arrives as a watch event, and nothing falls between the two. kopf's
later listings (after a watch expired, ``410 Gone``) are full, as is any listing once the handover
closes, and any resource the resync had to list before kopf got to it (it waits at most
:data:`WAIT_SECONDS` from its start: kopf may not watch a resource it found, e.g. a CRD created a
moment ago).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from typing import Final

from kubevec.inference.identity import resource_name

logger = logging.getLogger(__name__)

#: How long the first resync waits, from its start, for kopf's watches to have their resource versions.
WAIT_SECONDS: Final = 30.0

#: (group, plural): a resource, whatever its version (both sides read it at one, ``controller/kube/versions.py``).
Key = tuple[str, str]


class Handover:
    """Who lists each shared resource at start-up: the first resync, after kopf's watch has begun."""

    def __init__(self, *, shares: Callable[[str, str, Collection[str], bool], bool]) -> None:
        """``shares(group, plural, verbs, preferred)``: whether kopf watches a resource the resync lists."""
        self._shares = shares
        self._open = False  # from begin() (kopf is about to watch) to close() (the first resync is over)
        self._closed = False
        self._taken: set[Key] = set()  # kopf asked for its resource version only (or is asking)
        self._listed: set[Key] = set()  # the resync listed it first: kopf lists it fully
        self._started: dict[Key, asyncio.Event] = {}  # set once kopf's request answered (or failed)
        self._deadline: float | None = None
        self.handed_over = 0  # kopf listings the resync made unnecessary (for logs and tests)
        self.waited = 0.0  # seconds the first resync spent waiting for kopf's watches

    @property
    def open(self) -> bool:
        return self._open

    def begin(self) -> None:
        """kopf is about to start its watches, and the first resync has not run: hand its listings over."""
        self._open = not self._closed

    def shares(self, *, group: str, plural: str, verbs: Collection[str], preferred: bool) -> bool:
        return self._shares(group, plural, verbs, preferred)

    # -- kopf's side -------------------------------------------------------------------------------

    def take(self, key: Key) -> bool:
        """Whether kopf's listing of ``key`` may ask for its resource version only (its first, while open)."""
        if not self._open or key in self._taken or key in self._listed:
            return False
        self._taken.add(key)
        self.handed_over += 1
        return True

    def started(self, key: Key) -> None:
        """kopf's request for ``key`` answered or failed: the resync may list it now (and must, if it failed)."""
        self._event(key).set()

    # -- the resync's side -------------------------------------------------------------------------

    async def before_listing(self, key: Key) -> None:
        """Wait until kopf's watch of ``key`` has its resource version, or the wait is over; then list it."""
        if not self._open:
            return
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + WAIT_SECONDS
        event = self._event(key)
        if not event.is_set():
            started = time.monotonic()
            try:
                await asyncio.wait_for(event.wait(), timeout=max(0.0, self._deadline - now))
            except TimeoutError:
                if key in self._taken:  # asked, not answered yet: kopf's watch may start after this listing
                    logger.warning("Listed a resource before kopf's watch began resource=%s", _name(key))
                else:
                    logger.info("Listed a resource kopf has not listed yet resource=%s", _name(key))
            finally:
                self.waited += time.monotonic() - started
        if key not in self._taken:
            self._listed.add(key)  # kopf's first listing, whenever it comes, is a full one

    def close(self) -> None:
        """After the first resync (done or failed): every listing from now on is kopf's full one."""
        if self._open:
            logger.info(
                "Handed kopf's first listings over to the first resync resources=%d waited=%.2fs",
                self.handed_over,
                self.waited,
            )
        self._open = False
        self._closed = True
        for event in self._started.values():
            event.set()

    def _event(self, key: Key) -> asyncio.Event:
        return self._started.setdefault(key, asyncio.Event())


def _name(key: Key) -> str:
    group, plural = key
    return resource_name(plural=plural, group=group)
