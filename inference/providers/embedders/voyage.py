"""Voyage AI embeddings for production (``voyage-4`` by default).

The official ``voyageai`` async client does the HTTP; its own retries are off (``max_retries=0``)
because they ignore ``Retry-After``. Retrying here honours it, backs off exponentially otherwise,
and only retries what can succeed later (429, 5xx, timeouts, connection errors).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import voyageai.error
from voyageai.client_async import AsyncClient

from kubevec.core.errors import EmbedderError, Retryable
from kubevec.inference.providers.embedders.remote import (
    DEFAULT_OPTIONS,
    Kind,
    RemoteEmbedder,
    RemoteOptions,
    RetryPolicy,
    known_dimension,
    public_url,
    retry_after,
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


class VoyageEmbedder(RemoteEmbedder):
    """Embeds with the Voyage API; ``input_type`` is always sent (document vs query).

    Batching (by count and estimated tokens), the count and dimension checks and normalising are
    :class:`RemoteEmbedder`'s; only the request is Voyage's. Two things differ from other servers, as
    they always did here: the server truncates long texts itself (``truncation=True``), so nothing is
    clipped before sending, and no prefixes are added (Voyage's ``input_type`` does their job).
    """

    provider = "voyage"
    known_dimensions = KNOWN_DIMENSIONS
    max_texts = MAX_TEXTS_PER_REQUEST
    max_request_tokens = MAX_TOKENS_PER_REQUEST

    def __init__(
        self, options: RemoteOptions = DEFAULT_OPTIONS, *, api_key: str | None, max_backoff: float = 30.0
    ) -> None:
        if not api_key:
            raise EmbedderError(
                "The Voyage embedder needs an API key: set KUBEVEC_EMBEDDER__API_KEY "
                "(or use the offline embedder with KUBEVEC_EMBEDDER__PROVIDER=local)"
            )
        model = options.model or DEFAULT_MODEL
        known_dimension(self.provider, model, KNOWN_DIMENSIONS, options.dimension)  # before a client is made
        self._voyage = VoyageCalls(
            api_key=api_key,
            what=f"model={model}; key: KUBEVEC_EMBEDDER__API_KEY",
            base_url=options.base_url,
            max_attempts=options.max_attempts,
            max_backoff=max_backoff,
            timeout=options.timeout,
        )
        super().__init__(
            calls=self._voyage, model=model, options=dataclasses.replace(options, query_prefix="", document_prefix="")
        )
        #: Sent whenever it is configured (the model's default size otherwise), known model or not.
        self._output_dimension = options.dimension

    async def call_batch(self, texts: list[str], *, kind: Kind) -> list[list[float]]:
        async def call() -> Any:
            return await self._voyage.client.embed(
                texts, model=self.model, input_type=kind, truncation=True, output_dimension=self._output_dimension
            )

        result = await self._voyage.call(call)
        try:
            return [list(row) for row in result.embeddings]
        except (AttributeError, TypeError) as exc:
            raise self.malformed("embeddings", exc) from None

    def _clipped(self, texts: list[str]) -> list[str]:
        return texts  # the server truncates (truncation=True)


def _retry_after(exc: voyageai.error.VoyageError) -> float | None:
    return retry_after(getattr(exc, "headers", None) or {})
