"""Optional reranking of a search's top candidates by a cross-encoder.

A cross-encoder reads the question and each candidate together, which a bi-encoder's single vector
per text cannot; it costs one call per search over the top ``candidates`` (default 20) fused
results. Providers: ``cohere`` (Cohere's ``/rerank`` and every server that speaks it: vLLM, Jina,
Infinity, LiteLLM), ``tei`` (text-embeddings-inference's own ``/rerank``), ``voyage``, and ``local``
(a cross-encoder ONNX folder, ``KUBEVEC_RERANKER__MODEL_DIR``). Off by default: no PyPI package
ships a small cross-encoder's weights for offline use (nothing may be downloaded at run time).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from kubevec.core.errors import EmbedderError, RerankError

if TYPE_CHECKING:
    from kubevec.inference.providers.config import EmbedderSettings

DEFAULT_RERANK_MODEL: Final = "rerank-2.5"
DEFAULT_COHERE_MODEL: Final = "rerank-v3.5"
DEFAULT_COHERE_URL: Final = "https://api.cohere.com/v2"


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    async def rerank(self, query: str, documents: Sequence[str], *, top_k: int) -> list[tuple[int, float]]:
        """``(index into documents, relevance in [0, 1])``, most relevant first, at most ``top_k``."""
        ...


class RerankerSettings(BaseModel):
    """``KUBEVEC_RERANKER__*``: an optional cross-encoder over the top candidates of a query."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["none", "voyage", "cohere", "tei", "local"] = Field(
        default="none", description="none (default), cohere (any Cohere-compatible /rerank), tei, voyage or local"
    )
    model: str | None = Field(default=None, description="the server's reranking model (each provider has a default)")
    api_key: SecretStr | None = Field(
        default=None, description="API key (default: the embedder's, when both use the same provider)"
    )
    base_url: str | None = Field(
        default=None, description="server URL (default: the embedder's, when both use the same provider)"
    )
    headers: dict[str, SecretStr] = Field(default_factory=dict, description="extra HTTP headers, JSON")
    model_dir: Path | None = Field(default=None, description="local: a cross-encoder ONNX folder")
    model_sha256: str | None = Field(default=None, description="local: sha256 of its model.onnx")
    max_length: int = Field(default=512, ge=8, le=8192, description="local: word pieces per (query, document) pair")
    timeout_seconds: float = Field(default=30.0, gt=0, description="servers: per request")
    candidates: int = Field(default=20, ge=2, le=100, description="top fused results the reranker reorders")

    @model_validator(mode="after")
    def _local_needs_a_folder(self) -> RerankerSettings:
        if self.provider == "local" and (self.model_dir is None or not self.model_sha256):
            raise ValueError("provider=local needs model_dir and model_sha256 (sha256sum model.onnx)")
        return self


class VoyageReranker:
    """Voyage's reranking endpoint through the official client, with the embedder's retry policy."""

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str | None = DEFAULT_RERANK_MODEL,
        base_url: str | None = None,
        max_attempts: int = 4,
        max_backoff: float = 10.0,
        timeout: float = 30.0,
    ) -> None:
        if not api_key:
            raise RerankError(
                "The Voyage reranker needs an API key: set KUBEVEC_RERANKER__API_KEY or KUBEVEC_EMBEDDER__API_KEY "
                "(or KUBEVEC_RERANKER__PROVIDER=none)"
            )
        from kubevec.inference.providers.embedders.voyage import (
            VoyageCalls,  # the client's import is not free: only when used
        )

        self._model = model or DEFAULT_RERANK_MODEL
        self._calls = VoyageCalls(
            api_key=api_key,
            what=f"reranker model={self._model}",
            base_url=base_url,
            max_attempts=max_attempts,
            max_backoff=max_backoff,
            timeout=timeout,
        )

    @property
    def name(self) -> str:
        return f"voyage:{self._model}"

    async def rerank(self, query: str, documents: Sequence[str], *, top_k: int) -> list[tuple[int, float]]:
        if not documents:
            return []

        async def call() -> Any:
            return await self._calls.client.rerank(
                query, list(documents), model=self._model, top_k=min(top_k, len(documents)), truncation=True
            )

        with _as_rerank_errors():
            result = await self._calls.call(call)
        ranked = [(int(r.index), float(r.relevance_score)) for r in result.results]
        if any(not 0 <= index < len(documents) for index, _ in ranked):
            raise RerankError(f"Voyage returned a rerank index outside the {len(documents)} documents sent")
        return sorted(ranked, key=lambda pair: -pair[1])


class _HttpReranker:
    """A reranking server reached over HTTP: the shared client, retries and errors (embedders/remote.py)."""

    provider: str

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        headers: Mapping[str, str] | None,
        max_attempts: int,
        timeout: float,
        transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        from kubevec.inference.providers.embedders.remote import HttpCalls

        self._model = model
        sent = dict(headers or {})
        if api_key:
            sent["Authorization"] = f"Bearer {api_key}"
        self._calls = HttpCalls(
            provider=self.provider,
            base_url=base_url,
            headers=sent,
            secrets=[api_key or ""],
            what=f"reranker model={model}",
            max_attempts=max_attempts,
            max_backoff=10.0,
            timeout=timeout,
            transport=transport,
        )

    @property
    def name(self) -> str:
        return f"{self.provider}:{self._model}"


class CohereReranker(_HttpReranker):
    """``POST {base_url}/rerank`` as Cohere defines it; vLLM, Jina, Infinity and LiteLLM serve the same shape."""

    provider = "cohere"

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        max_attempts: int = 4,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not api_key and base_url is None:
            raise RerankError(
                "The Cohere reranker needs an API key: set KUBEVEC_RERANKER__API_KEY (a local server: set "
                "KUBEVEC_RERANKER__BASE_URL, a key is then optional)",
                reason="config",
            )
        super().__init__(
            model=model or DEFAULT_COHERE_MODEL,
            base_url=base_url or DEFAULT_COHERE_URL,
            api_key=api_key,
            headers=headers,
            max_attempts=max_attempts,
            timeout=timeout,
            transport=transport,
        )

    async def rerank(self, query: str, documents: Sequence[str], *, top_k: int) -> list[tuple[int, float]]:
        if not documents:
            return []
        body = {"model": self._model, "query": query, "documents": list(documents), "top_n": min(top_k, len(documents))}
        with _as_rerank_errors():
            answer = await self._calls.post("/rerank", body)
        try:
            ranked = [(int(r["index"]), float(r["relevance_score"])) for r in answer["results"]]
        except (KeyError, TypeError, ValueError):
            raise RerankError("cohere answered without results[].index/relevance_score", reason="response") from None
        return _checked(ranked, len(documents), provider="cohere", top_k=top_k)


class TeiReranker(_HttpReranker):
    """text-embeddings-inference's own ``POST /rerank`` (``{"query", "texts"}`` -> ``[{"index", "score"}]``)."""

    provider = "tei"

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None = None,
        model: str | None = None,
        headers: Mapping[str, str] | None = None,
        max_attempts: int = 4,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise RerankError("The tei reranker needs its server: set KUBEVEC_RERANKER__BASE_URL", reason="config")
        super().__init__(
            model=model or "tei",
            base_url=base_url,
            api_key=api_key,
            headers=headers,
            max_attempts=max_attempts,
            timeout=timeout,
            transport=transport,
        )

    async def rerank(self, query: str, documents: Sequence[str], *, top_k: int) -> list[tuple[int, float]]:
        if not documents:
            return []
        with _as_rerank_errors():
            answer = await self._calls.post("/rerank", {"query": query, "texts": list(documents), "truncate": True})
        try:
            ranked = [(int(r["index"]), float(r["score"])) for r in answer]
        except (KeyError, TypeError, ValueError):
            raise RerankError("tei answered without [].index/score", reason="response") from None
        return _checked(ranked, len(documents), provider="tei", top_k=top_k)


@contextlib.contextmanager
def _as_rerank_errors() -> Iterator[None]:
    """The HTTP client rerankers share with embedders raises embedder errors; the caller is told it was the reranker."""
    try:
        yield
    except EmbedderError as exc:
        raise RerankError(str(exc), reason=exc.reason, status=exc.status) from exc


def _checked(ranked: list[tuple[int, float]], count: int, *, provider: str, top_k: int) -> list[tuple[int, float]]:
    """Indexes inside what was sent; scores in [0, 1] (a logit is squashed), most relevant first, ``top_k``."""
    if any(not 0 <= index < count for index, _ in ranked):
        raise RerankError(f"{provider} returned a rerank index outside the {count} documents sent", reason="response")
    if any(not 0.0 <= score <= 1.0 for _, score in ranked):
        ranked = [(index, 1.0 / (1.0 + math.exp(-score))) for index, score in ranked]
    return sorted(ranked, key=lambda pair: -pair[1])[:top_k]


def make_reranker(settings: RerankerSettings, *, embedder: EmbedderSettings | None = None) -> Reranker | None:
    """The configured reranker, or None; key and URL fall back to the embedder's when both use one provider."""
    if settings.provider == "none":
        return None
    same = embedder is not None and embedder.provider == settings.provider
    key = settings.api_key or (embedder.api_key if same and embedder is not None else None)
    url = settings.base_url or (embedder.base_url if same and embedder is not None else None)
    secret = key.get_secret_value() if key else None
    headers = {name: value.get_secret_value() for name, value in settings.headers.items()}
    if settings.provider == "cohere":
        return CohereReranker(
            api_key=secret, model=settings.model, base_url=url, headers=headers, timeout=settings.timeout_seconds
        )
    if settings.provider == "tei":
        return TeiReranker(
            api_key=secret, model=settings.model, base_url=url, headers=headers, timeout=settings.timeout_seconds
        )
    if settings.provider == "local":
        from kubevec.inference.providers.cross_encoder import LocalReranker

        if settings.model_dir is None or settings.model_sha256 is None:  # the validator refuses it: for mypy
            raise RerankError("provider=local needs model_dir and model_sha256", reason="config")
        with _as_rerank_errors():  # the model folder's checks are the local embedder's
            return LocalReranker(
                model_dir=settings.model_dir, model_sha256=settings.model_sha256, max_length=settings.max_length
            )
    return VoyageReranker(api_key=secret, model=settings.model, base_url=url)
