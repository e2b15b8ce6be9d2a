"""The LLM describer against a local fake server: both APIs, caching, fallback on any error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from inference.capabilities import describe_crd
from inference.llm import LLMDescriber
from inference.tokens import MAX_TOKENS, count_tokens
from tests.controlplane.cluster import free_port
from tests.unit.test_capabilities import shared_crds

ANSWER = {
    "description": "Requests an X.509 certificate from an issuer and keeps it renewed in a Secret.",
    "use_case": "get automatically renewed TLS certificates for my ingress",
    "capabilities": ["TLS certificates", "automatic renewal"],
    "providers": [],
    "complexity": "medium",
}


@pytest.fixture(scope="module")
def certificate() -> Any:
    crd = next(c for c in shared_crds() if c["metadata"]["name"] == "certificates.cert-manager.io")
    return describe_crd(crd)


async def serve(handler: Any) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_post("/v1/messages", handler)
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}"


async def test_anthropic_answer_refines_and_is_cached(tmp_path: Path, certificate: Any) -> None:
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append({"body": await request.json(), "key": request.headers.get("x-api-key")})
        return web.json_response({"content": [{"type": "text", "text": "Here:\n" + json.dumps(ANSWER)}]})

    runner, url = await serve(handler)
    try:
        for _ in range(2):  # a second describer instance reads the disk cache
            llm = LLMDescriber(provider="anthropic", url=url, model="claude-x", api_key="k", cache_dir=tmp_path)
            refined = await llm.refine(certificate)
            await llm.close()
    finally:
        await runner.cleanup()
    assert len(seen) == 1
    assert seen[0]["key"] == "k"
    assert seen[0]["body"]["model"] == "claude-x"
    assert refined.source == "crd+llm"
    assert refined.capabilities == ("TLS certificates", "automatic renewal")
    assert "keeps it renewed" in refined.text
    assert count_tokens(refined.text) <= MAX_TOKENS
    assert refined.id == certificate.id


async def test_openai_compatible_answer(tmp_path: Path, certificate: Any) -> None:
    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        assert body["response_format"] == {"type": "json_object"}
        return web.json_response({"choices": [{"message": {"content": json.dumps(ANSWER)}}]})

    runner, url = await serve(handler)
    try:
        llm = LLMDescriber(provider="openai", url=f"{url}/v1", model="m", api_key="k", cache_dir=tmp_path)
        refined = await llm.refine(certificate)
        await llm.close()
    finally:
        await runner.cleanup()
    assert refined.complexity == "medium"
    assert refined.description.startswith("Requests an X.509")


@pytest.mark.parametrize(
    ("status", "payload"),
    [
        (500, {"error": "boom"}),
        (200, {"content": [{"type": "text", "text": "no json here"}]}),
        (200, {"content": [{"type": "text", "text": json.dumps({**ANSWER, "complexity": "extreme"})}]}),
    ],
)
async def test_any_error_falls_back_to_the_schema_document(
    tmp_path: Path, certificate: Any, status: int, payload: Any
) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.json_response(payload, status=status)

    runner, url = await serve(handler)
    try:
        llm = LLMDescriber(provider="anthropic", url=url, model="m", api_key="k", cache_dir=tmp_path)
        assert await llm.refine(certificate) == certificate
        await llm.close()
    finally:
        await runner.cleanup()
    assert not any(p.suffix == ".json" for p in tmp_path.iterdir())  # noqa: ASYNC240 - failures are not cached


async def test_unreachable_endpoint_falls_back(tmp_path: Path, certificate: Any) -> None:
    llm = LLMDescriber(
        provider="openai",
        url=f"http://127.0.0.1:{free_port()}/v1",
        model="m",
        api_key="k",
        cache_dir=tmp_path,
        timeout=2,
    )
    assert await llm.refine(certificate) == certificate
    await llm.close()


async def test_requests_are_rate_limited(tmp_path: Path, certificate: Any) -> None:
    import dataclasses
    import time

    async def handler(request: web.Request) -> web.Response:
        return web.json_response({"content": [{"type": "text", "text": json.dumps(ANSWER)}]})

    runner, url = await serve(handler)
    try:
        llm = LLMDescriber(
            provider="anthropic", url=url, model="m", api_key="k", cache_dir=tmp_path, requests_per_minute=120
        )
        start = time.monotonic()
        await llm.refine(certificate)
        await llm.refine(dataclasses.replace(certificate, kind="Other"))  # a different prompt: not cached
        elapsed = time.monotonic() - start
        await llm.close()
    finally:
        await runner.cleanup()
    assert llm.requests_made == 2
    assert elapsed >= 0.45  # 120 per minute: one every 0.5 s
