"""``/healthz``, ``/readyz`` and ``/metrics``, each on its port (0 turns one off)."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from controller.metrics import Metrics


class HealthServer:
    """Liveness always answers; readiness asks ``not_ready()`` (None when ready, else the reason)."""

    def __init__(
        self,
        *,
        host: str,
        health_port: int,
        metrics_port: int,
        metrics: Metrics,
        not_ready: Callable[[], str | None],
    ) -> None:
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
        return web.Response(text="ok")

    async def _readyz(self, _: web.Request) -> web.Response:
        reason = self._not_ready()
        if reason is None:
            return web.Response(text="ready")
        return web.Response(status=503, text=f"not ready: {reason}")

    async def _render_metrics(self, _: web.Request) -> web.Response:
        self._metrics.ready.set(1 if self._not_ready() is None else 0)
        return web.Response(body=self._metrics.render(), content_type="text/plain")
