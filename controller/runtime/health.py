"""``/healthz``, ``/readyz`` and ``/metrics``, each on its port (0 turns one off), and the cluster probe."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from kubevec.controller.kube.client import ClusterReader
from kubevec.controller.runtime.metrics import Metrics
from kubevec.core.errors import KubeError

logger = logging.getLogger(__name__)

#: kopf's waits between failed API requests, watches included (``settings.networking.error_backoffs``).
#: The wait is not awakable: a watch that failed while the API server was down reconnects up to the
#: longest of these after it is back, so they stay short beside the resync interval (46 s in all
#: before kopf gives a request up, as before).
WATCH_BACKOFFS: tuple[float, ...] = (1, 2, 3, 5, 5, 5, 5, 5, 5, 5, 5)


class ClusterProbe:
    """Whether the API server answers, every few seconds: readiness and a metric follow it.

    kopf retries its watches on its own and says so only in logs; without this probe the
    controller would stay ready while it can neither list nor watch anything. ``on_recovered``
    runs when the API answers again (events may have been missed meanwhile: resync), and once
    more ``settle`` seconds later: kopf's watches reconnect only after their own backoff, and what
    changes until then reaches no handler (a deletion not even the watch's re-list reports).
    """

    def __init__(
        self,
        *,
        kube: ClusterReader,
        metrics: Metrics,
        interval: float,
        on_recovered: Callable[[], None],
        settle: float = max(WATCH_BACKOFFS) + 1,
    ) -> None:
        self._kube = kube
        self._metrics = metrics
        self._interval = interval
        self._on_recovered = on_recovered
        self._settle = settle
        self.error: str | None = None  # set while the API server cannot be reached

    async def run(self) -> None:
        lost_at = 0.0
        while True:
            try:
                await self._kube.get("/version", request_timeout=min(5.0, self._interval))
                if self.error is not None:
                    logger.info("Reached the Kubernetes API again after=%.0fs", time.monotonic() - lost_at)
                    self.error = None
                    self._on_recovered()
                    asyncio.get_running_loop().call_later(self._settle, self._on_recovered)
            except KubeError as exc:
                if self.error is None:
                    lost_at = time.monotonic()
                    logger.error("Lost the Kubernetes API, not ready until it answers error=%s", exc.reason)
                self.error = exc.reason
                self._metrics.errors.labels(stage="cluster").inc()
            self._metrics.cluster_reachable.set(0 if self.error else 1)
            await asyncio.sleep(self._interval)


class StoreDirectory:
    """An embedded store's directory, checked for being the one opened: deleted or replaced, it is not.

    An embedded store keeps writing into files that were deleted under it (the open handles still
    work), so every write "succeeds" into nothing. Only a new process recreates the directory; so
    liveness fails once this has lasted ``bound`` seconds and the kubelet restarts the pod.

    The opened directory is held open: a file system may give a directory created in its place the
    very inode number it freed (ext4 does at once, and LanceDB recreates its directory on its next
    write), so the number alone cannot tell the two apart. A held directory keeps its inode, and
    once removed its link count is 0.
    """

    def __init__(self, path: Path, *, bound: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.bound = bound
        self._clock = clock
        self._identity: tuple[int, int] | None = None
        self._held: int | None = None
        self.failing_since: float | None = None
        self.error: str | None = None

    def remember(self) -> None:
        """Note the directory the store has opened (after it has), and hold it open."""
        self.close()
        with contextlib.suppress(OSError):
            self._held = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
            found = os.fstat(self._held)
            self._identity = (found.st_dev, found.st_ino)

    def close(self) -> None:
        """Let the held directory go (a new :meth:`remember` holds the one opened then)."""
        if self._held is not None:
            with contextlib.suppress(OSError):
                os.close(self._held)
            self._held = None

    def check(self) -> str | None:
        """None while the opened directory is in place, else why not (also kept in ``error``)."""
        try:
            found = self.path.stat()
            if self._held is not None and os.fstat(self._held).st_nlink == 0:
                error: str | None = f"the store directory {self.path} is gone (removed after it was opened)"
            elif self._identity is not None and (found.st_dev, found.st_ino) != self._identity:
                error = f"the store directory {self.path} was replaced after it was opened"
            else:
                error = None
        except OSError as exc:
            error = f"the store directory {self.path} is gone ({exc.strerror or exc})"
        if error is None:
            self.failing_since, self.error = None, None
        elif self.error is None:
            logger.error("Cannot write the store, will restart after=%.0fs error=%s", self.bound, error)
            self.failing_since, self.error = self._clock(), error
        return error

    def not_live(self) -> str | None:
        if self.failing_since is None or self._clock() - self.failing_since < self.bound:
            return None
        return f"{self.error} for more than {self.bound:.0f}s"


class HealthServer:
    """Liveness asks ``not_live()``, readiness ``not_ready()`` (None when fine, else the reason)."""

    def __init__(
        self,
        *,
        host: str,
        health_port: int,
        metrics_port: int,
        metrics: Metrics,
        not_ready: Callable[[], str | None],
        not_live: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._not_live = not_live
        self._host = host
        self._health_port = health_port
        self._metrics_port = metrics_port
        self._metrics = metrics
        self._not_ready = not_ready
        self._runners: list[web.AppRunner] = []

    async def start(self) -> None:
        if self._health_port:
            app = web.Application()
            app.router.add_get("/healthz", self._healthz)
            app.router.add_get("/readyz", self._readyz)
            await self._listen(app, self._health_port)
        if self._metrics_port:
            app = web.Application()
            app.router.add_get("/metrics", self._render_metrics)
            await self._listen(app, self._metrics_port)

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    async def _listen(self, app: web.Application, port: int) -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, self._host, port).start()
        self._runners.append(runner)

    async def _healthz(self, _: web.Request) -> web.Response:
        reason = self._not_live()
        if reason is None:
            return web.Response(text="ok")
        return web.Response(status=503, text=f"not live: {reason}")

    async def _readyz(self, _: web.Request) -> web.Response:
        reason = self._not_ready()
        if reason is None:
            return web.Response(text="ready")
        return web.Response(status=503, text=f"not ready: {reason}")

    async def _render_metrics(self, _: web.Request) -> web.Response:
        self._metrics.ready.set(1 if self._not_ready() is None else 0)
        return web.Response(body=self._metrics.render(), content_type="text/plain")
