"""Every reranker, built from ``RerankerSettings``: Cohere-compatible, TEI, Voyage against stand-ins, local ONNX."""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kubevec.core.errors import RerankError
from kubevec.inference.providers.config import EmbedderSettings
from kubevec.inference.providers.rerank import Reranker, RerankerSettings, VoyageReranker, make_reranker
from tests.doubles.model_files import ids, table, write_cross_encoder
from tests.doubles.model_servers import KEY, StandIn, running

DOCUMENTS = [
    "kafka topic with partitions",
    "managed postgres database cluster",
    "tls certificate for a web server",
    "postgres database connection pooler",
]
QUERY = "managed postgres database"


@pytest.fixture(params=["cohere", "tei", "voyage", "local"])
async def reranker(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, Reranker, Any]]:
    provider: str = request.param
    if provider == "local":
        directory, sha = write_cross_encoder(tmp_path / "tiny-cross-encoder")
        yield provider, make_reranker(RerankerSettings(provider="local", model_dir=directory, model_sha256=sha)), None  # type: ignore[misc]
        return
    async with running(StandIn(dialect="voyage" if provider == "voyage" else f"{provider}-rerank")) as standin:
        made = make_reranker(RerankerSettings(provider=provider, api_key=KEY, base_url=standin.url))  # type: ignore[arg-type]
        yield provider, made, standin  # type: ignore[misc]


def local_relevance(query: str, document: str) -> float:
    """The tiny cross-encoder's logit: the sum of its per-token values over [CLS] query [SEP] document [SEP]."""
    column = table(11).sum(axis=1)
    pieces = ids(query) + ids(document)[1:]
    return 1.0 / (1.0 + math.exp(-float(column[pieces].sum())))


async def test_most_relevant_first_at_most_top_k_scores_in_unit_range(reranker: tuple[str, Reranker, Any]) -> None:
    provider, made, _ = reranker
    ranked = await made.rerank(QUERY, DOCUMENTS, top_k=3)
    assert len(ranked) == 3
    assert all(0.0 <= score <= 1.0 for _, score in ranked)
    assert [score for _, score in ranked] == sorted((score for _, score in ranked), reverse=True)
    if provider == "local":
        want = sorted(range(len(DOCUMENTS)), key=lambda i: -local_relevance(QUERY, DOCUMENTS[i]))[:3]
        assert [index for index, _ in ranked] == want
        assert ranked[0][1] == pytest.approx(local_relevance(QUERY, DOCUMENTS[want[0]]), abs=1e-5)
    else:
        assert ranked[0] == (1, 1.0)  # every query word in it
    assert await made.rerank(QUERY, [], top_k=3) == []
    assert made.name.startswith(f"{provider}:")


async def test_a_rate_limit_is_retried(reranker: tuple[str, Reranker, Any]) -> None:
    provider, made, server = reranker
    if provider == "local":
        pytest.skip("no server")
    server.script = [(429, {"Retry-After": "0"})]
    assert (await made.rerank(QUERY, DOCUMENTS, top_k=1))[0][0] == 1


@pytest.mark.parametrize("provider", ["cohere", "tei"])
async def test_a_wrong_key_is_one_clear_error_without_the_key(provider: str, caplog: pytest.LogCaptureFixture) -> None:
    wrong = "sk-wrong-reranker-5512ab90cc"
    async with running(StandIn(dialect=f"{provider}-rerank")) as standin:
        made = make_reranker(RerankerSettings(provider=provider, api_key=wrong, base_url=standin.url))  # type: ignore[arg-type]
        assert made is not None
        with caplog.at_level(logging.DEBUG), pytest.raises(RerankError) as raised:
            await made.rerank(QUERY, DOCUMENTS, top_k=2)
    assert raised.value.reason == "auth"
    assert "status=401" in str(raised.value)
    assert wrong not in str(raised.value)
    assert wrong not in caplog.text


def test_key_and_url_come_from_the_embedder_only_when_both_use_one_provider() -> None:
    cohere = EmbedderSettings(provider="cohere", api_key=KEY, base_url="http://cohere.internal/v2")
    made = make_reranker(RerankerSettings(provider="cohere"), embedder=cohere)
    assert made is not None
    assert made._calls.base_url == "http://cohere.internal/v2"  # type: ignore[attr-defined]
    openai = EmbedderSettings(provider="openai", api_key=KEY, base_url="http://tei.internal/v1")
    with pytest.raises(RerankError, match="KUBEVEC_RERANKER__API_KEY"):  # not the OpenAI server's key
        make_reranker(RerankerSettings(provider="cohere"), embedder=openai)


def test_a_local_reranker_needs_its_folder_and_checks_its_model(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="model_dir and model_sha256"):
        RerankerSettings(provider="local")
    directory, _ = write_cross_encoder(tmp_path / "tiny")
    with pytest.raises(RerankError, match="sha256"):
        make_reranker(RerankerSettings(provider="local", model_dir=directory, model_sha256="0" * 64))


def test_a_logit_from_a_server_is_squashed_into_unit_range() -> None:
    from kubevec.inference.providers.rerank import _checked

    ranked = _checked([(0, -2.0), (1, 3.5)], 2, provider="vllm", top_k=2)
    assert ranked[0][0] == 1
    assert np.allclose([score for _, score in ranked], [1 / (1 + math.exp(-3.5)), 1 / (1 + math.exp(2.0))])
    with pytest.raises(RerankError, match="outside the 2 documents"):
        _checked([(5, 0.5)], 2, provider="vllm", top_k=1)


TEXTS = {
    "kafka": "Topic: a Kafka topic with partitions and retention",
    "postgres": "PostgresCluster: a managed postgres database cluster with failover",
    "pooler": "Pooler: connection pooling in front of a postgres database",
    "backup": "BackupSchedule: nightly backups of namespaces",
}


async def test_voyage_reranks_through_the_official_client_most_relevant_first() -> None:
    async with running(StandIn("voyage")) as fake:
        reranker = VoyageReranker(api_key=KEY, base_url=fake.url)
        order = await reranker.rerank("managed postgres database", list(TEXTS.values()), top_k=2)
        assert order == [(1, 1.0), (2, pytest.approx(2 / 3))]
        assert fake.received[-1].body["model"] == "rerank-2.5"
        assert fake.received[-1].body["top_k"] == 2
        assert await reranker.rerank("anything", [], top_k=3) == []


async def test_voyage_reranker_retries_what_can_succeed_and_names_what_cannot() -> None:
    async with running(StandIn("voyage", script=[(429, {"Retry-After": "0"})])) as fake:
        reranker = VoyageReranker(api_key=KEY, base_url=fake.url)
        assert (await reranker.rerank("postgres", ["postgres", "kafka"], top_k=2))[0][0] == 0
        assert reranker._calls.retries == 1
    async with running(StandIn("voyage", script=[(503, {})] * 10)) as fake:
        reranker = VoyageReranker(api_key=KEY, base_url=fake.url, max_attempts=2, max_backoff=0.01)
        with pytest.raises(RerankError, match="after 2 attempts"):
            await reranker.rerank("postgres", ["postgres"], top_k=1)
    async with running(StandIn("voyage")) as fake:
        with pytest.raises(RerankError, match="rejected the credentials"):
            await VoyageReranker(api_key="bad", base_url=fake.url).rerank("x", ["y"], top_k=1)
    with pytest.raises(RerankError, match="KUBEVEC_RERANKER__API_KEY"):
        make_reranker(RerankerSettings(provider="voyage"))
    assert make_reranker(RerankerSettings()) is None  # off by default
