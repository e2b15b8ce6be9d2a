"""Voyage AI embeddings for production (``voyage-4`` by default).

The official ``voyageai`` async client does the HTTP; its own retries are off (``max_retries=0``)
because they ignore ``Retry-After``. Retrying here honours it, backs off exponentially otherwise,
and only retries what can succeed later (429, 5xx, timeouts, connection errors).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

import voyageai.error
from voyageai.client_async import AsyncClient

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.embedders.remote import (
    DEFAULT_OPTIONS,
    RemoteOptions,
    Retryable,
    RetryPolicy,
    normalised,
    public_url,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_MODEL: Final = "voyage-4"
DEFAULT_URL: Final = "https://api.voyageai.com/v1"
#: Output dimensions of the models we know; others must be given explicitly.
KNOWN_DIMENSIONS: Final = {
    "voyage-4": 1024,
    "voyage-4-large": 1024,
    "voyage-4-lite": 1024,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-3-large": 1024,
    "voyage-code-3": 1024,
}
#: The API accepts at most 1000 texts per request and a model-dependent token total
#: (320k for voyage-4 / 3.5, 120k for the large ones); stay well inside the smallest.
MAX_TEXTS_PER_REQUEST: Final = 1000
MAX_TOKENS_PER_REQUEST: Final = 100_000


def _estimate_tokens(text: str) -> int:
    """A cheap upper-ish bound (~4 characters a token for English); only used to split batches."""
    return len(text) // 3 + 1


class VoyageCalls(RetryPolicy):
    """One official async client and the retry policy every Voyage call shares (embeddings, reranking).

    The policy is the one every provider shares (remote.py); here only the client's exceptions are
    sorted into what can pass later and what cannot.
    """

    def __init__(
        self,
        *,
        api_key: str,
        what: str,
        base_url: str | None,
        max_attempts: int,
        max_backoff: float,
        timeout: float,
    ) -> None:
        super().__init__(provider="voyage", what=what, max_attempts=max_attempts, max_backoff=max_backoff)
        # The client logs request bodies and the server's answers (which may echo the key) under "voyage";
        # kubevec reports each failure itself, without either.
        logging.getLogger("voyage").setLevel(logging.CRITICAL)
        self.client = AsyncClient(api_key=api_key, max_retries=0, timeout=timeout, base_url=base_url)
        self.url = public_url(base_url or DEFAULT_URL)

    async def call(self, fn: Callable[[], Awaitable[T]], *, url: str | None = None) -> T:
        """``fn()`` (a call on ``self.client``) with the shared retries; one clear error for the rest."""
        return await super().call(lambda: self._classified(fn), url=url or self.url)

    async def _classified(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            return await fn()
        except voyageai.error.RateLimitError as exc:
            raise Retryable(str(exc), reason="rate_limited", retry_after=_retry_after(exc)) from None
        except voyageai.error.ServiceUnavailableError as exc:
            raise Retryable(str(exc), reason="unavailable", retry_after=_retry_after(exc)) from None
        except voyageai.error.Timeout as exc:
            raise Retryable(str(exc) or "timed out", reason="timeout", retry_after=None) from None
        except (voyageai.error.APIConnectionError, voyageai.error.TryAgain) as exc:
            raise Retryable(str(exc), reason="unavailable", retry_after=None) from None
        except voyageai.error.AuthenticationError:  # its message may echo the key: not shown
            raise EmbedderError(
                f"voyage rejected the credentials (POST {self.url}, status=401; {self.what}): check the API key",
                reason="auth",
            ) from None
        except voyageai.error.VoyageError as exc:
            status = getattr(exc, "http_status", None)
            if isinstance(status, int) and status >= 500:
                raise Retryable(str(exc), reason="unavailable", retry_after=_retry_after(exc)) from None
            raise EmbedderError(
                f"voyage refused the request (POST {self.url}, status={status}; {self.what}): {exc}", reason="refused"
            ) from exc


class VoyageEmbedder:
    """Embeds with the Voyage API; ``input_type`` is always sent (document vs query)."""

    def __init__(
        self, options: RemoteOptions = DEFAULT_OPTIONS, *, api_key: str | None, max_backoff: float = 30.0
    ) -> None:
        if not api_key:
            raise EmbedderError(
                "The Voyage embedder needs an API key: set KUBEVEC_EMBEDDER__API_KEY "
                "(or use the offline embedder with KUBEVEC_EMBEDDER__PROVIDER=local)"
            )
        model, dimension = options.model or DEFAULT_MODEL, options.dimension
        resolved = dimension or KNOWN_DIMENSIONS.get(model)
        if resolved is None:
            raise EmbedderError(f"Unknown output dimension for Voyage model {model!r}: set KUBEVEC_EMBEDDER__DIMENSION")
        self._model = model
        self._dimension = resolved
        self._output_dimension = dimension  # only sent when asked for: the model's default otherwise
        self._batch_size = max(1, min(options.batch_size or 128, MAX_TEXTS_PER_REQUEST))
        self._calls = VoyageCalls(
            api_key=api_key,
            what=f"model={model}; key: KUBEVEC_EMBEDDER__API_KEY",
            base_url=options.base_url,
            max_attempts=options.max_attempts,
            max_backoff=max_backoff,
            timeout=options.timeout,
        )

    @property
    def retries(self) -> int:
        """Calls retried so far (the controller exports it as kubevec_embedding_retries_total)."""
        return self._calls.retries

    @property
    def name(self) -> str:
        return f"voyage:{self._model}"

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for batch in self._batches(texts):
            vectors.extend(await self._embed(batch, input_type="document"))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        (vector,) = await self._embed([text], input_type="query")
        return vector

    def _batches(self, texts: Sequence[str]) -> Iterator[list[str]]:
        batch: list[str] = []
        tokens = 0
        for text in texts:
            cost = _estimate_tokens(text)
            if batch and (len(batch) >= self._batch_size or tokens + cost > MAX_TOKENS_PER_REQUEST):
                yield batch
                batch, tokens = [], 0
            batch.append(text)
            tokens += cost
        if batch:
            yield batch

    async def _embed(self, texts: list[str], *, input_type: str) -> list[list[float]]:
        async def call() -> Any:
            return await self._calls.client.embed(
                texts,
                model=self._model,
                input_type=input_type,
                truncation=True,
                output_dimension=self._output_dimension,
            )

        result = await self._calls.call(call)
        embeddings: list[list[float]] = [normalised(row) for row in result.embeddings]
        if len(embeddings) != len(texts):
            raise EmbedderError(
                f"Voyage returned {len(embeddings)} embeddings for {len(texts)} texts", reason="response"
            )
        for row in embeddings:
            if len(row) != self._dimension:
                raise EmbedderError(
                    f"Voyage returned {len(row)}-dimensional vectors, expected {self._dimension} for {self._model} "
                    "(KUBEVEC_EMBEDDER__DIMENSION); to move the store to another model or size, run kubevec migrate",
                    reason="dimension",
                )
        return embeddings


def _retry_after(exc: voyageai.error.VoyageError) -> float | None:
    headers = getattr(exc, "headers", None) or {}
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
