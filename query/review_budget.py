"""The review budget: every TokenReview and SubjectAccessReview this process asks, all callers together."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from kubevec.core.errors import ReviewUnavailable


class ReviewThrottled(ReviewUnavailable):
    """Answering this caller now would exceed the review budget shared by every caller: come back later."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ReviewBudget:
    """A token bucket for every TokenReview and SubjectAccessReview this process asks, all callers together.

    A computation reserves what it will ask before it starts; one that would have to wait longer
    than ``max_wait`` is refused at once with the wait as Retry-After instead of queueing behind
    everybody else (200 new callers once waited 206 s each for their first answer).
    """

    def __init__(
        self,
        *,
        rate: float,
        burst: int,
        max_wait: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("the review budget needs a positive rate and burst")
        self.rate, self.burst, self.max_wait = rate, burst, max_wait
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()
        self.spent = 0

    async def spend(self, count: int, *, what: str) -> None:
        """Take ``count`` reviews, paced to the rate; :class:`ReviewThrottled` when those queued ahead need longer than ``max_wait``.

        What is ahead is the bucket's debt: a caller's own cost is paced, never refused (a view
        that needs a thousand reviews in ``reviews`` mode takes ten seconds at 100/s), but the next
        caller is told to come back when that debt is paid instead of queueing behind it.
        """
        if count <= 0:
            return
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now
        ahead = max(0.0, -self._tokens) / self.rate
        if ahead > self.max_wait:
            raise ReviewThrottled(
                f"{what} would wait {ahead:.1f}s behind other callers' reviews (budget {self.rate:g}/s)",
                retry_after=ahead,
            )
        wait = max(0.0, (count - self._tokens) / self.rate)
        self._tokens -= count  # below zero: the next caller waits for this one's debt
        self.spent += count
        if wait > 0:
            await asyncio.sleep(wait)

    def refund(self, count: int) -> None:
        """Give back what was reserved and not asked (an admin answered by its second question)."""
        if count > 0:
            self._tokens = min(float(self.burst), self._tokens + count)
            self.spent -= count
