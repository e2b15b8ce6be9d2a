"""The one contract every embedding provider passes, each against its loopback stand-in (tests/doubles/model_servers.py).

Built through ``EmbedderSettings`` and ``make_embedder``, as ``KUBEVEC_EMBEDDER__*`` builds them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from kubevec.core.errors import EmbedderError, EmbedderUnavailable
from kubevec.inference.providers.config import EmbedderSettings, make_embedder
from kubevec.inference.providers.embedders.remote import CHARS_PER_TOKEN, RemoteEmbedder
from tests.doubles.model_servers import AWS_ACCESS_KEY, KEY, StandIn, running

HEADER_SECRET = "hdr-9b1e77c0aa3f5d2e"

#: provider case -> (stand-in dialect, settings beyond provider/key/url, the side documents are sent as)
CASES: dict[str, tuple[str, dict[str, Any], str]] = {
    "openai": (
        "openai",
        {"provider": "openai", "model": "bge-small-en-v1.5", "headers": {"X-Tenant": HEADER_SECRET}},
        "",
    ),
    "openai-base64": ("openai", {"provider": "openai", "model": "nomic-embed-text", "encoding": "base64"}, ""),
    "azure": ("azure", {"provider": "openai", "model": "embeddings-prod", "api_version": "2024-10-21"}, ""),
    "cohere": ("cohere", {"provider": "cohere", "model": "embed-english-v3.0"}, "document"),
    "gemini": ("gemini", {"provider": "gemini", "model": "gemini-embedding-001"}, "document"),
    "bedrock-titan": ("bedrock", {"provider": "bedrock", "model": "amazon.titan-embed-text-v2:0"}, ""),
    "bedrock-cohere": ("bedrock", {"provider": "bedrock", "model": "cohere.embed-english-v3"}, "document"),
    "voyage": ("voyage", {"provider": "voyage", "model": "voyage-4"}, "document"),
}
HTTP_ONLY = {"openai", "openai-base64", "azure", "cohere", "gemini"}  # the providers built on remote.py's httpx client


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    name: str = request.param
    if CASES[name][0] == "bedrock":
        for variable, value in {
            "AWS_ACCESS_KEY_ID": AWS_ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": "standin-secret-access-key-0000000000000",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": "/nonexistent",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
            "AWS_EC2_METADATA_DISABLED": "true",
        }.items():
            monkeypatch.setenv(variable, value)
        monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
    return name


@pytest.fixture
async def standin(case: str) -> AsyncIterator[StandIn]:
    async with running(StandIn(dialect=CASES[case][0])) as server:
        yield server


def embedder(case: str, standin: StandIn, **overrides: Any) -> Any:
    _, extra, _ = CASES[case]
    values: dict[str, Any] = {"dimension": standin.dimension, "base_url": standin.url, "max_attempts": 3, **extra}
    if extra["provider"] != "bedrock":
        values["api_key"] = KEY
    if extra.get("api_version"):  # Azure: the resource's root, the client adds /openai/deployments/...
        values["base_url"] = standin.url
    values.update(overrides)
    return make_embedder(EmbedderSettings(**values))  # Voyage retries as the others do (RemoteEmbedder's policy)


def close(got: list[list[float]], want: list[list[float]]) -> bool:
    return np.asarray(got).shape == np.asarray(want).shape and bool(np.allclose(got, want, atol=1e-6))


def side(case: str) -> str:
    return CASES[case][2]


async def test_vectors_come_back_in_order_across_batches(case: str, standin: StandIn) -> None:
    texts = [f"resource number {i} in the payments namespace" for i in range(37)]
    vectors = await embedder(case, standin, batch_size=2).embed_documents(texts)
    assert close(vectors, [standin.expected(text, side=side(case)) for text in texts])
    if CASES[case][1]["model"] == "amazon.titan-embed-text-v2:0":  # one text per call, several at once
        assert sorted(standin.texts) == sorted(texts)
    else:
        assert standin.texts == texts  # each text sent once, in order
        assert 2 <= len(standin.received) < len(texts)  # batched


async def test_queries_and_documents_are_sent_as_their_own_side(case: str, standin: StandIn) -> None:
    made = embedder(case, standin)
    query = await made.embed_query("which resource gives me a managed postgres?")
    await made.embed_documents(["a managed postgres cluster"])
    query_side = "query" if side(case) else ""
    assert query == pytest.approx(
        standin.expected("which resource gives me a managed postgres?", side=query_side), abs=1e-6
    )
    assert [request.side for request in standin.received] == [query_side, side(case)]


async def test_an_empty_text_is_embedded_and_a_huge_one_clipped_and_counted(
    case: str, standin: StandIn, caplog: pytest.LogCaptureFixture
) -> None:
    if case == "voyage":
        pytest.skip("Voyage truncates on the server (truncation=true); its client sends texts whole")
    made = embedder(case, standin, max_input_tokens=100)
    with caplog.at_level(logging.WARNING):
        vectors = await made.embed_documents(["", "x" * 100_000, "ok"])
    assert len(vectors) == 3
    sent = sorted(standin.texts, key=len)  # Titan's calls run side by side: any order
    assert sent[:2] == ["", "ok"]
    assert sent[2] == "x" * (100 * CHARS_PER_TOKEN)  # clipped to the limit, not dropped
    assert made.truncated == 1
    assert "Clipped texts to the model's input limit" in caplog.text


async def test_a_rate_limit_is_retried_after_the_time_the_server_asks(case: str, standin: StandIn) -> None:
    standin.script = [(429, {"Retry-After": "1"})]
    made = embedder(case, standin)
    started = time.monotonic()
    assert len(await made.embed_documents(["one", "two"])) == 2
    assert time.monotonic() - started >= 1.0
    assert made.retries == 1


async def test_server_errors_are_retried_with_backoff(case: str, standin: StandIn) -> None:
    standin.script = [(503, {}), (500, {})]
    made = embedder(case, standin)
    assert close(await made.embed_documents(["one"]), [standin.expected("one", side=side(case))])
    assert made.retries == 2


async def test_a_timeout_is_retried_then_reported_as_unavailable(case: str, standin: StandIn) -> None:
    if case == "voyage":
        pytest.skip("the voyageai client's own timeout handling; covered by test_voyage.py")
    standin.script = [1.5]
    made = embedder(case, standin, timeout_seconds=0.5)
    assert len(await made.embed_documents(["slow"])) == 1
    assert made.retries == 1
    standin.script = [1.5, 1.5, 1.5]
    with pytest.raises(EmbedderUnavailable) as raised:
        await made.embed_documents(["slower"])
    assert raised.value.reason == "timeout"


async def test_a_wrong_key_is_one_clear_error_that_never_shows_a_key(
    case: str, standin: StandIn, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-wrong-4411aa09e7c2b3d1f0"
    if CASES[case][0] == "bedrock":
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONG000000000001")
        made = embedder(case, standin)
    else:
        made = embedder(case, standin, api_key=wrong)
    with caplog.at_level(logging.DEBUG), pytest.raises(EmbedderError) as raised:
        await made.embed_documents(["hello"])
    message = str(raised.value)
    assert raised.value.reason == "auth"
    assert not isinstance(raised.value, EmbedderUnavailable)  # not retried: it cannot pass later
    assert standin.url.split("//")[1].split("/")[0] in message  # the server it asked
    assert "status=40" in message
    assert CASES[case][1]["provider"] in message
    for secret in (wrong, KEY, "AKIAWRONG000000000001", HEADER_SECRET):
        assert secret not in message
        assert secret not in caplog.text


async def test_vectors_of_another_size_name_kubevec_migrate(case: str, standin: StandIn) -> None:
    standin.served_dimension = standin.dimension // 2
    with pytest.raises(EmbedderError, match="kubevec migrate") as raised:
        await embedder(case, standin).embed_documents(["a text"])
    assert raised.value.reason == "dimension"


async def test_the_name_says_provider_and_model(case: str, standin: StandIn) -> None:
    made = embedder(case, standin)
    assert made.name == f"{CASES[case][1]['provider']}:{CASES[case][1]['model']}"
    prefixed = embedder(case, standin, query_prefix="query: ", document_prefix="passage: ")
    # other prefixes, other vectors: another name, so a store notices (Voyage marks the side with its own
    # input_type and takes no prefixes, as before it shared RemoteEmbedder's batching)
    if isinstance(prefixed, RemoteEmbedder) and prefixed.provider != "voyage":
        assert prefixed.name != made.name
        await prefixed.embed_query("postgres")
        assert standin.received[-1].texts == ["query: postgres"]


@pytest.mark.parametrize("case", ["openai"])
async def test_a_server_that_refuses_a_batch_as_too_large_gets_smaller_ones(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(StandIn(dialect="openai", max_batch=3)) as standin:
        made = embedder(case, standin, batch_size=2)  # 8 texts a request
        texts = [f"text {i}" for i in range(20)]
        with caplog.at_level(logging.WARNING):
            vectors = await made.embed_documents(texts)
        assert close(vectors, [standin.expected(t, side="") for t in texts])
        assert made.batch_size <= 3
        assert max(len(request.texts) for request in standin.received) <= 3
        assert "Sending smaller batches" in caplog.text


def test_each_http_provider_is_built_on_the_shared_client() -> None:
    """The retry, error and clipping behaviour above is one implementation, not one per provider."""
    import importlib

    for name in ("openai", "cohere", "gemini", "bedrock"):
        module = importlib.import_module(f"kubevec.inference.providers.embedders.{name}")
        classes = [v for v in vars(module).values() if isinstance(v, type) and v.__name__.endswith("Embedder")]
        assert any(issubclass(c, RemoteEmbedder) and c is not RemoteEmbedder for c in classes), name
    assert set(CASES) >= HTTP_ONLY


async def test_an_answer_without_vectors_or_json_is_a_clear_error() -> None:
    import httpx

    from kubevec.inference.providers.embedders.openai import OpenAIEmbedder
    from kubevec.inference.providers.embedders.remote import RemoteOptions

    def server(body: bytes) -> OpenAIEmbedder:
        answer = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
        return OpenAIEmbedder(
            RemoteOptions(base_url="http://tei.models/v1", model="m", dimension=4, transport=answer), api_key=KEY
        )

    with pytest.raises(EmbedderError, match=r"openai answered without data\[\]\.embedding/index \(model=m\)") as raised:
        await server(b'{"object": "list"}').embed_documents(["x"])
    assert raised.value.reason == "response"
    with pytest.raises(EmbedderError, match="a body that is not JSON") as raised:
        await server(b"<html>proxy error</html>").embed_documents(["x"])
    assert raised.value.reason == "response"
