"""The embedder protocol every caller (sync engine, query side, benchmarks) relies on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


class EmbedderError(RuntimeError):
    """Embedding failed; the message says what to fix (a missing key, an unreachable API...).

    ``reason`` is a short word for metrics (``kubevec_embedder_errors_total{reason}``): ``auth``,
    ``refused``, ``dimension``, ``response``, ``config`` or ``error``; never anything the caller sent.
    """

    def __init__(self, message: str, *, reason: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        #: The HTTP status a server answered with, when one did.
        self.status = status

    def public(self, *, provider: str) -> str:
        """What an unauthenticated reader may see (``/readyz``, the status record): the provider, the
        reason and the status, never a server's words (a body can echo the key)."""
        status = f" status={self.status}" if self.status is not None else ""
        return f"embedder failing provider={provider} reason={self.reason}{status}"


class EmbedderUnavailable(EmbedderError):
    """A transient failure (network, 5xx, rate limit after retries): the caller may retry later.

    ``reason``: ``unavailable`` (5xx, connection), ``rate_limited`` (429) or ``timeout``.
    """

    def __init__(self, message: str, *, reason: str = "unavailable", status: int | None = None) -> None:
        super().__init__(message, reason=reason, status=status)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of a fixed ``dimension``.

    ``name`` identifies the model and is recorded with each collection, so that a store built
    with one model is never silently queried with another.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...
