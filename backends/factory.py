"""Open the configured store: the only place that picks a backend class."""

from __future__ import annotations

from kubevec.backends.config import StoreSettings
from kubevec.backends.protocol import VectorStore
from kubevec.core.errors import BackendError


def open_store(settings: StoreSettings, *, follow: bool = False) -> VectorStore:
    """Build (but do not connect) the store the settings name; connecting happens on first use.

    ``follow``: a long-lived reader in a process that does not write (``kubevec mcp``); an embedded
    store then keeps up with what the controller's process writes to the same directory.
    """
    if settings.backend == "memory":
        from kubevec.backends.memory import MemoryStore

        return MemoryStore()
    if settings.backend == "pgvector":
        from kubevec.backends.pgvector import PgvectorStore

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
    if settings.backend == "lancedb":
        try:
            from kubevec.backends.lance import LanceStore
        except ImportError as exc:
            raise BackendError(
                "The lancedb backend needs the lancedb package: pip install 'kubevec[lancedb]' "
                "(the container image includes it)"
            ) from exc
        return LanceStore(path=str(settings.path or ".kubevec/lancedb"), follow=follow)
    if settings.backend == "weaviate":
        try:
            from kubevec.backends.weaviate import WeaviateStore
        except ImportError as exc:
            raise BackendError(
                "The weaviate backend needs the weaviate-client package: pip install 'kubevec[weaviate]' "
                "(the container image includes it)"
            ) from exc
        return WeaviateStore(
            url=str(settings.url),
            grpc_port=settings.grpc_port,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            consistency=settings.consistency_level,
            replication_factor=settings.replication_factor,
            timeout=settings.timeout_seconds,
        )
    if settings.backend == "redis":
        try:
            from kubevec.backends.redis import RedisStore
        except ImportError as exc:
            raise BackendError(
                "The redis backend needs the redis package: pip install 'kubevec[redis]' (the container image includes it)"
            ) from exc
        return RedisStore(
            url=str(settings.url),
            password=settings.password.get_secret_value() if settings.password else None,
            key_prefix=settings.key_prefix,
            tls_ca_file=str(settings.tls_ca_file) if settings.tls_ca_file else None,
            timeout=settings.timeout_seconds,
        )
    if settings.backend == "qdrant":
        from kubevec.backends.qdrant import QdrantStore

        return QdrantStore(
            url=settings.url,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            path=None if settings.url else str(settings.path) if settings.path else None,
            timeout=settings.timeout_seconds,
        )
    from kubevec.backends.chroma import ChromaStore

    return ChromaStore(
        path=None if settings.url else str(settings.path or ".kubevec/chroma"),
        url=settings.url,
        headers=settings.headers,
        timeout=settings.timeout_seconds,
        follow=follow,
    )
