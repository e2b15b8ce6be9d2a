"""The cluster probe: readiness follows the API server, and a recovery resyncs twice."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

from kubevec.controller.kube.client import ClusterReader
from kubevec.controller.runtime.health import WATCH_BACKOFFS, ClusterProbe
from kubevec.controller.runtime.metrics import Metrics
from kubevec.core.errors import KubeError


class FlakyApi:
    """Answers ``/version`` except during ``down`` calls, from the ``after``-th on."""

    def __init__(self, *, after: int, down: int) -> None:
        self.calls = 0
        self._after = after
        self._down = down

    async def get(self, path: str, **_: Any) -> dict[str, Any]:
        self.calls += 1
        if self._after <= self.calls < self._after + self._down:
            raise KubeError(f"GET {path} failed", reason="Connection refused")
        return {"major": "1"}


async def _run_probe(*, api: FlakyApi, settle: float, seconds: float) -> tuple[ClusterProbe, list[float]]:
    loop = asyncio.get_running_loop()
    started = loop.time()
    recovered: list[float] = []
    probe = ClusterProbe(
        kube=cast(ClusterReader, api),
        metrics=Metrics(),
        interval=0.01,
        on_recovered=lambda: recovered.append(loop.time() - started),
        settle=settle,
    )
    task = asyncio.create_task(probe.run())
    await asyncio.sleep(seconds)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return probe, recovered


def test_a_recovery_resyncs_now_and_once_the_watches_are_back() -> None:
    """kopf's watches reconnect only after their backoff: what changed until then needs a second resync."""
    probe, recovered = asyncio.run(_run_probe(api=FlakyApi(after=2, down=3), settle=0.3, seconds=0.6))
    assert probe.error is None
    assert len(recovered) == 2, recovered
    assert recovered[1] - recovered[0] >= 0.29


def test_an_api_that_never_fails_asks_for_no_resync() -> None:
    probe, recovered = asyncio.run(_run_probe(api=FlakyApi(after=10**9, down=0), settle=0.01, seconds=0.1))
    assert probe.error is None
    assert recovered == []


def test_the_second_resync_waits_out_kopfs_longest_backoff() -> None:
    """The default settle covers the longest wait of a watch that failed while the API was down."""
    probe = ClusterProbe(
        kube=cast(ClusterReader, FlakyApi(after=1, down=0)), metrics=Metrics(), interval=1, on_recovered=lambda: None
    )
    assert probe._settle > max(WATCH_BACKOFFS)
    assert max(WATCH_BACKOFFS) < 10  # well inside any resync interval (the default is 600 s)
