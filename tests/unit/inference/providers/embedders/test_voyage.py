"""Voyage on the shared embedder: RemoteEmbedder's batches and checks, Voyage's own request, one Retry-After."""

from __future__ import annotations

import email.utils
import time
from types import SimpleNamespace
from typing import Any

import pytest
import voyageai.error

from kubevec.core.errors import EmbedderError, EmbedderUnavailable, KubevecError, ModelError, Retryable
from kubevec.inference.providers.embedders.remote import DEFAULT_OPTIONS, RemoteOptions, retry_after
from kubevec.inference.providers.embedders.voyage import VoyageEmbedder


class FakeClient:
    """Answers ``embed`` as the official client does, and remembers what it was asked."""

    def __init__(self, *, dimension: int = 1024, fail: list[Exception] | None = None) -> None:
        self.dimension = dimension
        self.fail = list(fail or [])
        self.asked: list[dict[str, Any]] = []

    async def embed(self, texts: list[str], **kwargs: Any) -> Any:
        self.asked.append({"texts": list(texts), **kwargs})
        if self.fail:
            raise self.fail.pop(0)
        return SimpleNamespace(embeddings=[[float(i + 1)] + [0.0] * (self.dimension - 1) for i in range(len(texts))])


def voyage(options: RemoteOptions = DEFAULT_OPTIONS, **client: Any) -> tuple[VoyageEmbedder, FakeClient]:
    embedder = VoyageEmbedder(options, api_key="pa-test-key", max_backoff=0.0)
    fake = FakeClient(**client)
    embedder._voyage.client = fake  # type: ignore[assignment]
    return embedder, fake


async def test_batches_by_count_and_sends_input_type_and_model() -> None:
    embedder, fake = voyage(RemoteOptions(batch_size=128))
    vectors = await embedder.embed_documents([f"text {i}" for i in range(300)])
    query = await embedder.embed_query("where is postgres?")
    assert len(vectors) == 300
    assert len(query) == 1024
    assert [len(asked["texts"]) for asked in fake.asked] == [128, 128, 44, 1]
    assert [asked["input_type"] for asked in fake.asked] == ["document"] * 3 + ["query"]
    assert {asked["model"] for asked in fake.asked} == {"voyage-4"}
    assert all(asked["truncation"] is True and asked["output_dimension"] is None for asked in fake.asked)
    assert embedder.name == "voyage:voyage-4"


async def test_batches_by_estimated_tokens_and_never_clips_or_prefixes() -> None:
    long = "x" * 150_000  # 50,001 tokens estimated: two fit under Voyage's 100,000 per request, not three
    options = RemoteOptions(max_input_tokens=10, query_prefix="q: ", document_prefix="d: ")
    embedder, fake = voyage(options)
    await embedder.embed_documents([long, long, long])
    assert [len(asked["texts"]) for asked in fake.asked] == [1, 1, 1]
    assert fake.asked[0]["texts"] == [long]  # the server truncates; no prefix is added
    assert embedder.truncated == 0
    assert embedder.name == "voyage:voyage-4"


async def test_a_configured_dimension_is_sent_and_checked() -> None:
    embedder, fake = voyage(RemoteOptions(model="voyage-next", dimension=256), dimension=256)
    assert len(await embedder.embed_query("x")) == 256
    assert fake.asked[0]["output_dimension"] == 256
    wrong, _ = voyage(RemoteOptions(dimension=512), dimension=1024)
    with pytest.raises(EmbedderError, match="1024-dimensional vectors"):
        await wrong.embed_query("x")


def test_an_unknown_model_needs_a_dimension_and_a_key_is_required() -> None:
    with pytest.raises(EmbedderError, match="KUBEVEC_EMBEDDER__DIMENSION"):
        VoyageEmbedder(RemoteOptions(model="voyage-next"), api_key="pa-test-key")
    with pytest.raises(EmbedderError, match="needs an API key"):
        VoyageEmbedder(RemoteOptions(), api_key=None)


async def test_rate_limits_are_retried_and_counted_then_reported_as_unavailable() -> None:
    limited = voyageai.error.RateLimitError("slow down", headers={"Retry-After": "0"})
    embedder, _ = voyage(RemoteOptions(max_attempts=3), fail=[limited, limited])
    assert len(await embedder.embed_documents(["a"])) == 1
    assert embedder.retries == 2
    failing, _ = voyage(RemoteOptions(max_attempts=2), fail=[limited] * 3)
    with pytest.raises(EmbedderUnavailable, match="after 2 attempts") as raised:
        await failing.embed_documents(["a"])
    assert raised.value.reason == "rate_limited"


def test_retry_after_is_read_one_way_whatever_the_headers() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"Retry-After": "1.5"}) == 1.5  # the Voyage client's and botocore's spelling
    assert retry_after({"Retry-After": "-4"}) == 0.0
    assert retry_after({"Retry-After": "soon"}) is None
    assert retry_after({}) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after({"retry-after": later}) or 0) <= 31


def test_retryable_is_in_the_one_tree() -> None:
    error = Retryable("status=503", reason="unavailable", retry_after=2.0, status=503)
    assert isinstance(error, ModelError)
    assert isinstance(error, KubevecError)
    assert (error.reason, error.retry_after, error.status) == ("unavailable", 2.0, 503)
