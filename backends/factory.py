"""Open the configured store: the only place that picks a backend class."""

from __future__ import annotations

from backends.base import VectorStore
from backends.config import StoreSettings
from backends.errors import BackendError


def open_store(settings: StoreSettings) -> VectorStore:
    """Build (but do not connect) the store the settings name; connecting happens on first use."""
    if settings.backend == "memory":
        from backends.memory import MemoryStore

        return MemoryStore()
    if settings.backend == "pgvector":
        from backends.pgvector import PgvectorStore

        if not settings.url:
            raise BackendError(
                "The pgvector backend needs KUBEVEC_STORE__URL, e.g. postgresql://kubevec@postgres:5432/kubevec "
                "(the password in KUBEVEC_STORE__PASSWORD)"
            )
        return PgvectorStore(
            url=settings.url,
            password=settings.password.get_secret_value() if settings.password else None,
            timeout=settings.timeout_seconds,
        )
    if settings.backend == "qdrant":
        from backends.qdrant import QdrantStore

        return QdrantStore(
            url=settings.url,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            path=None if settings.url else str(settings.path) if settings.path else None,
            timeout=settings.timeout_seconds,
        )
    from backends.chroma import ChromaStore

    return ChromaStore(
        path=None if settings.url else str(settings.path or ".kubevec/chroma"),
        url=settings.url,
        headers=settings.headers,
        timeout=settings.timeout_seconds,
    )
