"""Per-caller limits on the MCP endpoint, on a fake clock: sessions idle out and rate buckets refill
by the clock the Limiter is given, never by the time the test takes."""

from __future__ import annotations

from kubevec.query.limits import Caller, Limiter, Limits
from tests.doubles.clock import FakeClock


def test_one_caller_at_its_caps_never_stops_another() -> None:
    clock = FakeClock()
    limiter = Limiter(
        Limits(sessions=4, caller_sessions=2, caller_in_flight=2, in_flight=3, caller_rate=5, caller_burst=5),
        clock=clock,
    )
    for n in range(2):
        assert limiter.opening(Caller("user", "a")) is None
        limiter.opened(f"a{n}", Caller("user", "a"))
    refused = limiter.opening(Caller("user", "a"))
    assert refused is not None
    assert (refused.status, refused.reason) == (429, "caller_sessions")
    assert refused.header == b"300"  # when its oldest session idles out
    assert limiter.opening(Caller("user", "b")) is None  # the other caller still connects
    limiter.opened("b0", Caller("user", "b"))
    limiter.opened("b1", Caller("user", "b"))
    full = limiter.opening(Caller("user", "c"))
    assert full is not None
    assert (full.status, full.reason) == (503, "sessions")
    limiter.closed("b1")
    assert limiter.opening(Caller("user", "c")) is None

    assert limiter.admit(Caller("user", "a")) is None
    assert limiter.admit(Caller("user", "a")) is None
    busy = limiter.admit(Caller("user", "a"))
    assert busy is not None
    assert (busy.status, busy.reason) == (429, "caller_in_flight")
    assert limiter.admit(Caller("user", "b")) is None  # a's requests in progress do not hold b back
    server_busy = limiter.admit(Caller("user", "c"))
    assert server_busy is not None
    assert (server_busy.status, server_busy.reason) == (503, "in_flight")
    for caller in ("a", "a", "b"):
        limiter.done(caller)
    assert limiter.admit(Caller("user", "c"), hold=False) is None  # a stream counts against the rate only
    for _ in range(4):  # a burst of 5
        assert limiter.admit(Caller("user", "c"), hold=False) is None
    fast = limiter.admit(Caller("user", "c"), hold=False)
    assert fast is not None
    assert (fast.status, fast.reason) == (429, "caller_rate")
    assert 0 < fast.retry_after <= 0.2
    assert limiter.refused["caller_sessions"] == 1
    assert limiter.refused["caller_rate"] == 1
    everyone = Limiter(Limits(rate=2, caller_rate=100, caller_burst=100), clock=clock)
    for n in range(4):  # a burst of twice the rate, from four callers
        assert everyone.admit(Caller("user", f"c{n}"), hold=False) is None
    busy_server = everyone.admit(Caller("user", "c9"), hold=False)
    assert busy_server is not None
    assert (busy_server.status, busy_server.reason) == (503, "rate")
    clock.advance(301)
    assert limiter.sessions_of("a") == 0  # idle past the timeout: gone, as in the SDK


def test_a_session_idles_out_after_the_idle_timeout_and_not_before() -> None:
    clock = FakeClock()
    limiter = Limiter(Limits(session_idle_seconds=300), clock=clock)
    limiter.opened("s", Caller("user", "a"))
    clock.advance(299)
    limiter.used("s")  # a request naming the session keeps it
    clock.advance(299)
    assert limiter.sessions_of(Caller("user", "a")) == 1
    clock.advance(1)
    assert limiter.sessions_of(Caller("user", "a")) == 0


def test_a_callers_rate_bucket_refills_with_the_clock() -> None:
    clock = FakeClock()
    limiter = Limiter(Limits(caller_rate=2, caller_burst=2), clock=clock)
    caller = Caller("token", "t")
    assert limiter.admit(caller, hold=False) is None
    assert limiter.admit(caller, hold=False) is None
    refused = limiter.admit(caller, hold=False)
    assert refused is not None
    assert refused.reason == "caller_rate"
    assert refused.retry_after == 0.5  # one token at two per second
    clock.advance(0.5)
    assert limiter.admit(caller, hold=False) is None
