"""The LLM describer against a scripted transport (httpx.MockTransport): both APIs, caching, fallback on any error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from kubevec.inference.capabilities import describe_crd
from kubevec.inference.providers.llm import LLMDescriber
from kubevec.inference.tokens import MAX_TOKENS, count_tokens
from tests.doubles.clock import FakeClock

ANSWER = {
    "description": "Requests an X.509 certificate from an issuer and keeps it renewed in a Secret.",
    "use_case": "get automatically renewed TLS certificates for my ingress",
    "capabilities": ["TLS certificates", "automatic renewal"],
    "providers": [],
    "complexity": "medium",
}
URL = "http://llm.test"
Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture(scope="module")
def certificate() -> Any:
    spec = {
        "type": "object",
        "required": ["secretName", "issuerRef"],
        "properties": {
            "secretName": {
                "type": "string",
                "description": "Name of the Secret resource that will hold the certificate.",
            },
            "dnsNames": {"type": "array", "items": {"type": "string"}, "description": "DNS subjectAltNames."},
            "issuerRef": {"type": "object", "description": "Reference to the issuer responsible for issuing it."},
            "renewBefore": {"type": "string", "description": "How long before expiry the certificate is renewed."},
        },
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "certificates.cert-manager.io"},
        "spec": {
            "group": "cert-manager.io",
            "scope": "Namespaced",
            "names": {"plural": "certificates", "singular": "certificate", "kind": "Certificate"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "A Certificate resource should be created to ensure an up to date and "
                            "signed X.509 certificate is stored in the Kubernetes Secret resource named in spec.secretName.",
                            "properties": {"spec": spec},
                        }
                    },
                }
            ],
        },
    }
    return describe_crd(crd)


def describer(tmp_path: Path, handler: Handler, **kwargs: Any) -> LLMDescriber:
    options: dict[str, Any] = {"provider": "anthropic", "url": URL, "model": "m", "api_key": "k", **kwargs}
    return LLMDescriber(cache_dir=tmp_path, transport=httpx.MockTransport(handler), **options)


async def test_anthropic_answer_refines_and_is_cached(tmp_path: Path, certificate: Any) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/messages"
        seen.append({"body": json.loads(request.content), "key": request.headers.get("x-api-key")})
        return httpx.Response(200, json={"content": [{"type": "text", "text": "Here:\n" + json.dumps(ANSWER)}]})

    counts = []
    for _ in range(2):  # a second describer instance reads the disk cache
        llm = describer(tmp_path, handler, model="claude-x")
        refined = await llm.refine(certificate)
        await llm.close()
        counts.append((llm.requests_made, llm.cache_hits, llm.failures))
    assert counts == [(1, 0, 0), (0, 1, 0)]  # exported as kubevec_llm_requests_total / _cache_hits_total
    assert len(seen) == 1
    assert seen[0]["key"] == "k"
    assert seen[0]["body"]["model"] == "claude-x"
    assert refined.source == "crd+llm"
    assert refined.capabilities == ("TLS certificates", "automatic renewal")
    assert "keeps it renewed" in refined.text
    assert count_tokens(refined.text) <= MAX_TOKENS
    assert refined.id == certificate.id


async def test_openai_compatible_answer(tmp_path: Path, certificate: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions"
        assert json.loads(request.content)["response_format"] == {"type": "json_object"}
        return httpx.Response(200, json={"choices": [{"message": {"content": json.dumps(ANSWER)}}]})

    llm = describer(tmp_path, handler, provider="openai", url=f"{URL}/v1")
    refined = await llm.refine(certificate)
    await llm.close()
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
    llm = describer(tmp_path, lambda _: httpx.Response(status, json=payload))
    assert await llm.refine(certificate) == certificate
    await llm.close()
    assert not any(p.suffix == ".json" for p in tmp_path.iterdir())  # noqa: ASYNC240 - failures are not cached


async def test_unreachable_endpoint_falls_back(tmp_path: Path, certificate: Any) -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    llm = describer(tmp_path, refused, provider="openai", url=f"{URL}/v1", timeout=2)
    assert await llm.refine(certificate) == certificate
    await llm.close()


async def test_requests_are_rate_limited(tmp_path: Path, certificate: Any) -> None:
    import dataclasses

    answer = httpx.Response(200, json={"content": [{"type": "text", "text": json.dumps(ANSWER)}]})
    clock = FakeClock()
    llm = describer(tmp_path, lambda _: answer, requests_per_minute=120, clock=clock)
    start = clock.monotonic()
    await llm.refine(certificate)
    await llm.refine(dataclasses.replace(certificate, kind="Other"))  # a different prompt: not cached
    await llm.close()
    assert llm.requests_made == 2
    assert clock.monotonic() - start == pytest.approx(0.5)  # 120 per minute: the second waits its 0.5 s


async def test_a_workload_is_described_once_per_template_facts(tmp_path: Path) -> None:
    """The workload prompt is its own (a capability answer is not reused), and the answer is cached on disk."""
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        answer = {"software": "Jaeger's query service: the web UI and API for searching traces."}
        return httpx.Response(200, json={"choices": [{"message": {"content": json.dumps(answer)}}]})

    facts = "kind: Deployment\nname: tracing\ncontainer query: image jaegertracing/jaeger-query:1.57, ports 16686/http"
    notes = []
    for _ in range(2):
        llm = describer(tmp_path, handler, provider="openai", url=f"{URL}/v1")
        assert (llm.cached_workload(facts) is None) == (not notes)  # the second describer reads the disk
        notes.append((await llm.describe_workload(facts)).software)
        await llm.close()
    assert len(seen) == 1
    assert "software" in seen[0]["messages"][0]["content"]
    assert seen[0]["messages"][1]["content"] == facts
    assert notes[0] == notes[1]
    assert "trace" in notes[0]
    assert llm.cached_workload(facts) is not None
    assert llm.cached_workload(facts + " ") is None  # other facts, another question


async def test_a_failed_workload_question_raises_and_is_not_cached(tmp_path: Path) -> None:
    llm = describer(tmp_path, lambda _: httpx.Response(200, json={"content": [{"type": "text", "text": "{}"}]}))
    with pytest.raises(ValidationError):
        await llm.describe_workload("kind: Deployment\nname: x")
    await llm.close()
    assert llm.failures == 1
    assert llm.cached_workload("kind: Deployment\nname: x") is None
