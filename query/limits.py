"""Per-caller limits on the MCP endpoint: sessions, requests in progress and request rate.

One global cap on sessions let one tenant open them all and lock every other out until they
idled away. Each caller (a Kubernetes identity, a static token's name) now has its own caps below
the global ones, so a caller at its cap never stops another from connecting. A refusal says when
to come back (Retry-After) and is counted by reason, never by token or caller.
"""

from __future__ import annotations

import collections
import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Final, Literal, NamedTuple

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from kubevec.core.clock import SYSTEM_CLOCK, Clock

CallerKind = Literal["static", "user", "token", "anonymous"]


class Caller(NamedTuple):
    """Who is calling, typed: what sessions, limits and logs are keyed on.

    A bare string let an API-server user literally named ``static:team-a`` (or ``token``) own that
    static token's sessions and spend its caps; a kind beside the name keeps them apart whatever
    a user is called.
    """

    kind: CallerKind
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


#: Callers whose rate buckets are remembered at once (the oldest go first).
MAX_CALLERS: Final = 10_000
#: Why a request was refused (the ``reason`` label of ``kubevec_mcp_refused_total``).
REASONS: Final = (
    "caller_sessions",
    "sessions",
    "caller_in_flight",
    "in_flight",
    "caller_rate",
    "rate",
    "review_budget",
    "review_unavailable",
    "unauthenticated",
)


class Count(NamedTuple):
    """A counter by one label, for the controller's registry or the standalone server's ``/metrics``."""

    name: str
    help: str
    label: str
    values: Mapping[str, int]


class AccessCollector(Collector):
    """The counts as Prometheus counters, for the controller's registry and the ``/metrics`` of ``kubevec mcp``."""

    def __init__(self, counts: Callable[[], Iterable[Count]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[CounterMetricFamily]:
        for count in self._counts():
            family = CounterMetricFamily(count.name, count.help, labels=[count.label])
            for key, value in sorted(count.values.items()):
                family.add_metric([key], float(value))
            yield family


@dataclasses.dataclass(frozen=True, kw_only=True)
class Limits:
    sessions: int = 1000
    caller_sessions: int = 50
    in_flight: int = 256
    caller_in_flight: int = 16
    caller_rate: float = 20.0
    caller_burst: float = 40.0
    rate: float = 1000.0  # requests per second, all callers (bursts of twice that)
    session_idle_seconds: float = 300.0

    def __post_init__(self) -> None:
        if self.caller_sessions >= self.sessions:
            raise ValueError("a caller's session cap must be below the global one")


@dataclasses.dataclass(frozen=True)
class Refusal:
    status: int  # 429: this caller's own limit; 503: the server's
    reason: str
    retry_after: float
    message: str

    @property
    def header(self) -> bytes:
        return str(max(1, math.ceil(self.retry_after))).encode()


class Limiter:
    """Counts what each caller holds; the HTTP guard asks it before passing a request on.

    Sessions are mirrored from the responses that open them (the SDK's ``mcp-session-id``),
    touched by every request that names them, and forgotten when deleted, unknown to the SDK
    (404), or idle as long as the SDK's own idle timeout.
    """

    def __init__(self, limits: Limits, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.limits = limits
        self._clock = clock.monotonic  # expiry and rate buckets: durations only
        self._sessions: dict[str, tuple[Caller, float]] = {}  # id -> (caller, last used)
        self._in_flight: collections.Counter[Caller] = collections.Counter()
        self._in_flight_total = 0
        self._buckets: dict[Caller, tuple[float, float]] = {}  # caller -> (tokens, at)
        self._all: tuple[float, float] = (2 * limits.rate, clock.monotonic())  # every caller's requests together
        self.refused: collections.Counter[str] = collections.Counter(dict.fromkeys(REASONS, 0))

    # -- sessions ----------------------------------------------------------------------------------

    def opening(self, caller: Caller) -> Refusal | None:
        """A request without a session id (it may open one): refused when the caller or the server is full."""
        self._expire()
        now = self._clock()
        mine = [used for owner, used in self._sessions.values() if owner == caller]
        idle = self.limits.session_idle_seconds
        if len(mine) >= self.limits.caller_sessions:
            return self._refuse(
                429,
                "caller_sessions",
                min(mine) + idle - now,
                f"this caller has {len(mine)} open sessions, its limit; end one (DELETE) or reuse it",
            )
        if len(self._sessions) >= self.limits.sessions:
            oldest = min(used for _, used in self._sessions.values())
            return self._refuse(503, "sessions", oldest + idle - now, "the server has all the sessions it may open")
        return None

    def opened(self, session: str, caller: Caller) -> None:
        self._sessions[session] = (caller, self._clock())

    def used(self, session: str) -> None:
        found = self._sessions.get(session)
        if found is not None:
            self._sessions[session] = (found[0], self._clock())

    def closed(self, session: str) -> None:
        self._sessions.pop(session, None)

    def sessions_of(self, caller: Caller) -> int:
        self._expire()
        return sum(1 for owner, _ in self._sessions.values() if owner == caller)

    def _expire(self) -> None:
        cutoff = self._clock() - self.limits.session_idle_seconds
        for session in [s for s, (_, used) in self._sessions.items() if used <= cutoff]:
            del self._sessions[session]

    # -- requests ----------------------------------------------------------------------------------

    def admit(self, caller: Caller, *, hold: bool = True) -> Refusal | None:
        """One request in: its caller's rate and in-flight caps, then the server's; None when admitted.

        ``hold`` False for a request that stays open while the session lives (the SSE stream a
        client GETs): it counts against the rate, not against requests in progress. Admitted with
        ``hold``, the caller must call :meth:`done` when it ends."""
        rate, burst = self.limits.caller_rate, self.limits.caller_burst
        now = self._clock()
        tokens, at = self._buckets.pop(caller, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        self._buckets[caller] = (tokens, now)
        while len(self._buckets) > MAX_CALLERS:
            del self._buckets[next(iter(self._buckets))]
        if tokens < 1:
            return self._refuse(
                429, "caller_rate", (1 - tokens) / rate, f"more than {rate:g} requests per second from this caller"
            )
        every, at = self._all
        every = min(2 * self.limits.rate, every + (now - at) * self.limits.rate)
        self._all = (every, now)
        if every < 1:
            return self._refuse(
                503, "rate", (1 - every) / self.limits.rate, "the server is answering as many requests as it may"
            )
        if not hold:
            self._buckets[caller] = (tokens - 1, now)
            self._all = (every - 1, now)
            return None
        if self._in_flight[caller] >= self.limits.caller_in_flight:
            return self._refuse(
                429, "caller_in_flight", 1.0, f"this caller has {self._in_flight[caller]} requests in progress"
            )
        if self._in_flight_total >= self.limits.in_flight:
            return self._refuse(503, "in_flight", 1.0, "the server is answering as many requests as it may")
        self._buckets[caller] = (tokens - 1, now)
        self._all = (every - 1, now)
        self._in_flight[caller] += 1
        self._in_flight_total += 1
        return None

    def done(self, caller: Caller) -> None:
        self._in_flight_total -= 1
        self._in_flight[caller] -= 1
        if self._in_flight[caller] <= 0:
            del self._in_flight[caller]

    def _refuse(self, status: int, reason: str, retry_after: float, message: str) -> Refusal:
        self.refused[reason] += 1
        return Refusal(status=status, reason=reason, retry_after=max(retry_after, 0.0), message=message)

    def count(self, reason: str) -> None:
        """A refusal decided elsewhere (authentication, reviews), counted with the rest."""
        self.refused[reason] += 1
