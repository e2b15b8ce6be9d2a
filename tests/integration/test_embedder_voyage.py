"""The Voyage embedder against a local fake server: model and input_type, batching, retries."""

from __future__ import annotations

import time

import pytest

from kubevec.core.errors import EmbedderError, EmbedderUnavailable
from kubevec.inference.providers.embedders.remote import RemoteOptions
from kubevec.inference.providers.embedders.voyage import VoyageEmbedder
from tests.doubles.model_servers import KEY, StandIn, running


async def test_documents_and_queries_send_model_and_input_type() -> None:
    async with running(StandIn("voyage", dimension=1024)) as fake:
        embedder = VoyageEmbedder(RemoteOptions(base_url=fake.url, batch_size=128), api_key=KEY)
        vectors = await embedder.embed_documents([f"text {i}" for i in range(300)])
        query = await embedder.embed_query("where is postgres?")
    assert len(vectors) == 300
    assert all(len(v) == 1024 for v in vectors)
    assert len(query) == 1024
    assert [len(r.texts) for r in fake.received] == [128, 128, 44, 1]
    assert {r.body["model"] for r in fake.received} == {"voyage-4"}
    assert [r.side for r in fake.received] == ["document"] * 3 + ["query"]
    assert embedder.name == "voyage:voyage-4"


async def test_rate_limit_honours_retry_after() -> None:
    async with running(StandIn("voyage", dimension=1024, script=[(429, {"Retry-After": "1"})])) as fake:
        embedder = VoyageEmbedder(RemoteOptions(base_url=fake.url), api_key=KEY, max_backoff=5)
        start = time.monotonic()
        await embedder.embed_documents(["a"])
        elapsed = time.monotonic() - start
    assert fake.calls == 2
    assert elapsed >= 0.95


async def test_server_errors_are_retried_then_succeed() -> None:
    script = [(503, {}), (500, {}), (502, {})]
    async with running(StandIn("voyage", dimension=1024, script=script)) as fake:
        embedder = VoyageEmbedder(RemoteOptions(base_url=fake.url), api_key=KEY, max_backoff=0.01)
        assert len(await embedder.embed_documents(["a", "b"])) == 2
    assert fake.calls == 4
    assert embedder.retries == 3  # exported as kubevec_embedding_retries_total


async def test_persistent_failure_is_unavailable_after_max_attempts() -> None:
    async with running(StandIn("voyage", dimension=1024, script=[(503, {})] * 10)) as fake:
        embedder = VoyageEmbedder(RemoteOptions(base_url=fake.url, max_attempts=3), api_key=KEY, max_backoff=0.01)
        with pytest.raises(EmbedderUnavailable, match="after 3 attempts"):
            await embedder.embed_documents(["a"])
    assert fake.calls == 3


async def test_bad_key_is_not_retried() -> None:
    async with running(StandIn("voyage", dimension=1024)) as fake:
        embedder = VoyageEmbedder(RemoteOptions(base_url=fake.url), api_key="bad", max_backoff=0.01)  # refused: 401
        with pytest.raises(EmbedderError, match="rejected the credentials"):
            await embedder.embed_query("x")
    assert embedder.retries == 0


async def test_unexpected_dimension_is_an_error() -> None:
    async with running(StandIn("voyage", dimension=1024, served_dimension=1023)) as fake:
        embedder = VoyageEmbedder(RemoteOptions(base_url=fake.url), api_key=KEY)
        with pytest.raises(EmbedderError, match="1023-dimensional"):
            await embedder.embed_documents(["a"])


def test_missing_key_is_a_clear_error() -> None:
    with pytest.raises(EmbedderError, match="KUBEVEC_EMBEDDER__API_KEY"):
        VoyageEmbedder(api_key=None)
    with pytest.raises(EmbedderError, match="KUBEVEC_EMBEDDER__DIMENSION"):
        VoyageEmbedder(RemoteOptions(model="voyage-99"), api_key=KEY)


async def test_unreachable_api_is_unavailable() -> None:
    from tests.controlplane.cluster import free_port

    embedder = VoyageEmbedder(
        RemoteOptions(base_url=f"http://127.0.0.1:{free_port()}/v1", max_attempts=2), api_key=KEY, max_backoff=0.01
    )
    with pytest.raises(EmbedderUnavailable):
        await embedder.embed_documents(["a"])
