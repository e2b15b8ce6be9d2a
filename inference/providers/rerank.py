"""Optional reranking of a search's top candidates by a cross-encoder (Voyage ``rerank-2.5``).

A cross-encoder reads the question and each candidate together, which a bi-encoder's single vector
per text cannot; it costs one API call per search over the top ``candidates`` (default 20) fused
results. Off by default: no PyPI package ships a small cross-encoder's weights for offline use
(nothing may be downloaded at run time), so the offline default stays fusion alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from kubevec.inference.providers.embedders.base import EmbedderError

DEFAULT_RERANK_MODEL: Final = "rerank-2.5"


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    async def rerank(self, query: str, documents: Sequence[str], *, top_k: int) -> list[tuple[int, float]]:
        """``(index into documents, relevance in [0, 1])``, most relevant first, at most ``top_k``."""
        ...


class RerankerSettings(BaseModel):
    """``KUBEVEC_RERANKER__*``: an optional cross-encoder over the top candidates of a query."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["none", "voyage"] = Field(default="none", description="none (default) or voyage")
    model: str = Field(default=DEFAULT_RERANK_MODEL, description="Voyage reranking model")
    api_key: SecretStr | None = Field(default=None, description="Voyage API key (default: the embedder's)")
    base_url: str | None = Field(default=None, description="Voyage API base URL override (default: the embedder's)")
    candidates: int = Field(default=20, ge=2, le=100, description="top fused results the reranker reorders")


class VoyageReranker:
    """Voyage's reranking endpoint through the official client, with the embedder's retry policy."""

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str = DEFAULT_RERANK_MODEL,
        base_url: str | None = None,
        max_attempts: int = 4,
        max_backoff: float = 10.0,
        timeout: float = 30.0,
    ) -> None:
        if not api_key:
            raise EmbedderError(
                "The Voyage reranker needs an API key: set KUBEVEC_RERANKER__API_KEY or KUBEVEC_EMBEDDER__API_KEY "
                "(or KUBEVEC_RERANKER__PROVIDER=none)"
            )
        from kubevec.inference.providers.embedders.voyage import (
            VoyageCalls,  # the client's import is not free: only when used
        )

        self._model = model
        self._calls = VoyageCalls(
            api_key=api_key,
            what=f"reranker model={model}",
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

        result = await self._calls.call(call)
        ranked = [(int(r.index), float(r.relevance_score)) for r in result.results]
        if any(not 0 <= index < len(documents) for index, _ in ranked):
            raise EmbedderError(f"Voyage returned a rerank index outside the {len(documents)} documents sent")
        return sorted(ranked, key=lambda pair: -pair[1])


def make_reranker(settings: RerankerSettings, *, api_key: SecretStr | None, base_url: str | None) -> Reranker | None:
    """The configured reranker, or None; key and URL fall back to the embedder's."""
    if settings.provider == "none":
        return None
    key = settings.api_key or api_key
    return VoyageReranker(
        api_key=key.get_secret_value() if key else None,
        model=settings.model,
        base_url=settings.base_url or base_url,
    )
