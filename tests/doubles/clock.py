"""A clock for tests that advances the moment something sleeps: backoffs and expiry on fake time."""

from __future__ import annotations

import asyncio


class FakeClock:
    """A :class:`kubevec.core.clock.Clock` that never waits.

    ``sleep(s)`` records ``s``, moves the clock ``s`` forward and yields to the event loop once, so a
    backoff of a minute takes no real time and the sleeps taken are there to assert on
    (:attr:`slept`). :meth:`advance` moves it by hand (a session idling out, a bucket refilling).
    """

    def __init__(self, *, monotonic: float = 1000.0, wall: float = 1_700_000_000.0) -> None:
        self._monotonic = monotonic
        self._wall = wall
        self.slept: list[float] = []
        self._slept = asyncio.Event()

    def monotonic(self) -> float:
        return self._monotonic

    def time(self) -> float:
        return self._wall

    def advance(self, seconds: float) -> None:
        self._monotonic += seconds
        self._wall += seconds

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._slept.set()
        self.advance(max(0.0, seconds))
        await asyncio.sleep(0)

    async def until_slept(self, count: int) -> None:
        """Until ``count`` sleeps have been taken in all (a test waiting for retries to happen)."""
        while len(self.slept) < count:
            self._slept.clear()
            await self._slept.wait()
