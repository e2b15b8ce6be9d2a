"""A local stand-in for the Voyage embeddings API (loopback only; tests never touch the internet)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from tests.controlplane.cluster import free_port


@dataclasses.dataclass
class FakeVoyage:
    """Scripted responses: each entry of ``script`` is (status, headers) used once, then 200s."""

    dimension: int = 1024
    script: list[tuple[int, dict[str, str]]] = dataclasses.field(default_factory=list)
    requests: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    auth_headers: list[str] = dataclasses.field(default_factory=list)
    wrong_dimension: bool = False
    url: str = ""

    async def _received(self, request: web.Request) -> tuple[dict[str, Any], web.Response | None]:
        """Record the request; the scripted failure to answer with, if one is left."""
        body = await request.json()
        self.requests.append(body)
        self.auth_headers.append(request.headers.get("Authorization", ""))
        if not self.script:
            return body, None
        status, headers = self.script.pop(0)
        text = json.dumps({"detail": f"scripted {status}"})
        return body, web.Response(status=status, headers=headers, text=text, content_type="application/json")

    async def handle(self, request: web.Request) -> web.Response:
        body, scripted = await self._received(request)
        if scripted is not None:
            return scripted
        size = self.dimension - 1 if self.wrong_dimension else self.dimension
        data = [
            {"object": "embedding", "embedding": vector(text, size), "index": i} for i, text in enumerate(body["input"])
        ]
        return web.json_response({"object": "list", "data": data, "model": body["model"], "usage": {"total_tokens": 1}})

    async def rerank(self, request: web.Request) -> web.Response:
        """Relevance = the share of the query's words in the document (deterministic, order-revealing)."""
        body, scripted = await self._received(request)
        if scripted is not None:
            return scripted
        query = set(body["query"].lower().split())
        scored = [
            {"index": i, "relevance_score": len(query & set(doc.lower().split())) / max(len(query), 1)}
            for i, doc in enumerate(body["documents"])
        ]
        scored.sort(key=lambda r: (-r["relevance_score"], r["index"]))
        if body.get("top_k"):
            scored = scored[: body["top_k"]]
        return web.json_response(
            {"object": "list", "data": scored, "model": body["model"], "usage": {"total_tokens": 1}}
        )


def vector(text: str, size: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [((digest[i % len(digest)] / 255.0) - 0.5) for i in range(size)]


@asynccontextmanager
async def running_fake_voyage(fake: FakeVoyage | None = None) -> AsyncIterator[FakeVoyage]:
    fake = fake or FakeVoyage()
    app = web.Application()
    app.router.add_post("/v1/embeddings", fake.handle)
    app.router.add_post("/v1/rerank", fake.rerank)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    fake.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield fake
    finally:
        await runner.cleanup()
