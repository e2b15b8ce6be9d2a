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
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter
from voyageai.client_async import AsyncClient

from kubevec.inference.providers.embedders.base import EmbedderError, EmbedderUnavailable
from kubevec.inference.providers.embedders.remote import normalised, public_url

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


class _Retryable(Exception):
    def __init__(self, cause: Exception, retry_after: float | None, *, reason: str = "unavailable") -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.retry_after = retry_after
        self.reason = reason


class VoyageCalls:
    """One official async client and the retry policy every Voyage call shares (embeddings, reranking)."""

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
        self.what = what
        self.max_attempts = max(1, max_attempts)
        #: Calls retried so far (the controller exports it as kubevec_embedding_retries_total).
        self.retries = 0
        self._max_backoff = max_backoff
        self._backoff = wait_exponential_jitter(multiplier=0.5, max=max_backoff)
        # The client logs request bodies and the server's answers (which may echo the key) under "voyage";
        # kubevec reports each failure itself, without either.
        logging.getLogger("voyage").setLevel(logging.CRITICAL)
        self.client = AsyncClient(api_key=api_key, max_retries=0, timeout=timeout, base_url=base_url)
        self.url = public_url(base_url or DEFAULT_URL)

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """``fn()`` with retries for what can succeed later; one clear error for the rest."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(lambda exc: isinstance(exc, _Retryable)),
            before_sleep=self._count_retry,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._classified(fn)
        except _Retryable as exc:
            raise EmbedderUnavailable(
                f"Voyage did not answer after {self.max_attempts} attempts ({self.what}): {exc.cause}",
                reason=exc.reason,
            ) from exc.cause
        raise AssertionError("unreachable")  # pragma: no cover

    async def _classified(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            return await fn()
        except voyageai.error.RateLimitError as exc:
            raise _Retryable(exc, _retry_after(exc), reason="rate_limited") from exc
        except voyageai.error.ServiceUnavailableError as exc:
            raise _Retryable(exc, _retry_after(exc)) from exc
        except voyageai.error.Timeout as exc:
            raise _Retryable(exc, None, reason="timeout") from exc
        except (voyageai.error.APIConnectionError, voyageai.error.TryAgain) as exc:
            raise _Retryable(exc, None) from exc
        except voyageai.error.AuthenticationError:  # its message may echo the key: not shown
            raise EmbedderError(
                f"voyage rejected the credentials (POST {self.url}, status=401; {self.what}): check the API key",
                reason="auth",
            ) from None
        except voyageai.error.VoyageError as exc:
            status = getattr(exc, "http_status", None)
            if isinstance(status, int) and status >= 500:
                raise _Retryable(exc, _retry_after(exc)) from exc
            raise EmbedderError(
                f"Voyage refused the request ({self.what}, status={status}): {exc}", reason="refused"
            ) from exc

    def _count_retry(self, state: RetryCallState) -> None:
        self.retries += 1

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            delay = min(exc.retry_after, self._max_backoff)
        else:
            delay = self._backoff(state)
        logger.warning("Retrying Voyage request attempt=%d delay=%.2fs error=%s", state.attempt_number, delay, exc)
        return delay


class VoyageEmbedder:
    """Embeds with the Voyage API; ``input_type`` is always sent (document vs query)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str = DEFAULT_MODEL,
        dimension: int | None = None,
        base_url: str | None = None,
        batch_size: int = 128,
        max_attempts: int = 6,
        max_backoff: float = 30.0,
        timeout: float = 60.0,
    ) -> None:
        if not api_key:
            raise EmbedderError(
                "The Voyage embedder needs an API key: set KUBEVEC_EMBEDDER__API_KEY "
                "(or use the offline embedder with KUBEVEC_EMBEDDER__PROVIDER=local)"
            )
        resolved = dimension or KNOWN_DIMENSIONS.get(model)
        if resolved is None:
            raise EmbedderError(f"Unknown output dimension for Voyage model {model!r}: set KUBEVEC_EMBEDDER__DIMENSION")
        self._model = model
        self._dimension = resolved
        self._output_dimension = dimension  # only sent when asked for: the model's default otherwise
        self._batch_size = max(1, min(batch_size, MAX_TEXTS_PER_REQUEST))
        self._calls = VoyageCalls(
            api_key=api_key,
            what=f"model={model}; key: KUBEVEC_EMBEDDER__API_KEY",
            base_url=base_url,
            max_attempts=max_attempts,
            max_backoff=max_backoff,
            timeout=timeout,
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
