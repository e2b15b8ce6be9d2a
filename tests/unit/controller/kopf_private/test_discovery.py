"""kopf's watch streams survive a resource that vanished (its CRD deleted) instead of ending the operator."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import kopf
import pytest
from kopf._cogs.clients import errors, watching

from kubevec.controller.kopf_private.discovery import tolerate_vanished_resources

RESOURCE = kopf.Resource("example.com", "v1", "widgets")


@pytest.fixture
def vanishing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A watch stream that yields one event, then answers 404 (the CRD was deleted meanwhile), as
    does every re-list after it."""
    streams: list[int] = []

    async def continuous_watch(**_: Any) -> AsyncIterator[Any]:
        streams.append(1)
        if len(streams) == 1:
            yield {"type": "ADDED", "object": {"metadata": {"name": "w"}}}
        raise errors.APINotFoundError("404 page not found", status=404, headers={})

    monkeypatch.setattr(watching, "continuous_watch", continuous_watch)
    vanished: list[str] = []
    return vanished


async def test_a_404_ends_the_stream_once_logged_and_counted(
    vanishing: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    tolerate_vanished_resources(on_vanish=vanishing.append, retry_seconds=0)
    settings = kopf.OperatorSettings()
    settings.watching.reconnect_backoff = 0
    with caplog.at_level(logging.WARNING):
        events = [
            e
            async for e in watching.infinite_watch(settings=settings, resource=RESOURCE, namespace=None, _iterations=3)
        ]
    assert len(events) == 1  # kopf started three streams; the 404s ended them, none raised
    assert vanishing == [str(RESOURCE)]  # counted once, not once per attempt
    assert sum("Stopped watching a resource that no longer exists" in r.message for r in caplog.records) == 1


async def test_without_it_kopf_lets_the_404_end_the_operator(vanishing: list[str]) -> None:
    """The behaviour this guards against: kopf 1.45 re-raises the 404 from its watcher."""
    settings = kopf.OperatorSettings()
    with pytest.raises(errors.APINotFoundError):
        async for _ in watching.infinite_watch(settings=settings, resource=RESOURCE, namespace=None, _iterations=1):
            pass
