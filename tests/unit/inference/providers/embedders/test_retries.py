"""The one retry policy every provider shares, on fake time: Retry-After honoured and capped, 4xx not retried."""

from __future__ import annotations

import httpx
import pytest

from kubevec.core.errors import EmbedderError, EmbedderUnavailable
from kubevec.inference.providers.embedders.remote import HttpCalls
from tests.doubles.clock import FakeClock


def server(*answers: httpx.Response) -> tuple[HttpCalls, FakeClock, list[httpx.Request]]:
    script, seen, clock = list(answers), [], FakeClock()

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return script.pop(0)

    calls = HttpCalls(
        provider="openai",
        base_url="http://embed.invalid/v1",
        headers={},
        max_attempts=4,
        max_backoff=30.0,
        transport=httpx.MockTransport(answer),
        clock=clock,
    )
    return calls, clock, seen


async def test_retry_after_is_waited_then_capped_at_the_policy_s_maximum() -> None:
    calls, clock, seen = server(
        httpx.Response(429, headers={"Retry-After": "7"}),
        httpx.Response(503, headers={"Retry-After": "3600"}),
        httpx.Response(200, json={"ok": True}),
    )
    assert await calls.post("/embeddings", {}) == {"ok": True}
    assert clock.slept == [7.0, 30.0]
    assert len(seen) == 3
    assert calls.retries == 2


async def test_without_retry_after_the_waits_grow_and_the_last_failure_is_unavailable() -> None:
    calls, clock, _ = server(*[httpx.Response(502)] * 4)
    with pytest.raises(EmbedderUnavailable, match="after 4 attempts") as raised:
        await calls.post("/embeddings", {})
    assert raised.value.status == 502
    assert len(clock.slept) == 3
    assert all(0 <= wait <= 30.0 for wait in clock.slept)


async def test_a_refusal_is_not_asked_again() -> None:
    calls, clock, seen = server(httpx.Response(400, text="bad input"))
    with pytest.raises(EmbedderError, match="refused the request"):
        await calls.post("/embeddings", {})
    assert clock.slept == []
    assert len(seen) == 1
