"""Time as an argument: what the engine, the App and the per-caller limits read and wait on.

Backoffs, debounce windows, session expiry and rate buckets all depend on time; when each read
``time.monotonic()`` and awaited ``asyncio.sleep`` itself, their tests waited in real time (marked
slow) or asserted wall-clock durations that failed on a loaded machine. Whatever reads or waits on
time takes a ``clock`` keyword instead, :data:`SYSTEM_CLOCK` by default; tests pass a clock that
advances the moment something sleeps (``tests/doubles/clock.py``).

Plain Python (``core`` imports no third-party package), so every layer may take one.
"""

from __future__ import annotations

import asyncio
import time
from typing import Final, Protocol


class Clock(Protocol):
    """Where time is read and waited on."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: for durations, deadlines and expiry."""
        ...

    def time(self) -> float:
        """Seconds since the epoch (wall time): for what is stored or shown to people."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (cancellable)."""
        ...


class SystemClock:
    """The real clock: :func:`time.monotonic`, :func:`time.time` and :func:`asyncio.sleep`."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


#: The default of every ``clock`` keyword.
SYSTEM_CLOCK: Final[Clock] = SystemClock()


async def wait_for_event(event: asyncio.Event, *, seconds: float, clock: Clock) -> bool:
    """Wait until ``event`` is set or ``seconds`` pass on ``clock``; True if the event was set.

    What ``asyncio.wait_for(event.wait(), seconds)`` does, with the time on an injectable clock (``asyncio.timeout``
    reads the event loop's own).
    """
    if event.is_set():
        return True
    if seconds <= 0:
        return False
    woken = asyncio.ensure_future(event.wait())
    slept = asyncio.ensure_future(clock.sleep(seconds))
    try:
        await asyncio.wait((woken, slept), return_when=asyncio.FIRST_COMPLETED)
    finally:
        woken.cancel()
        slept.cancel()
    return event.is_set()
