"""Backend-agnostic vector stores: one protocol, portable filters; Chroma, Qdrant, pgvector, LanceDB, Weaviate, Redis, memory."""

from kubevec.backends.base import BaseStore, CollectionInfo, VectorStore
from kubevec.backends.records import Health, Hit, Record, StoredHashes
from kubevec.core.errors import (
    BackendError,
    BackendUnavailable,
    CollectionMismatch,
    CollectionNotFound,
    InvalidFilter,
    InvalidRecord,
)

__all__ = [
    "BackendError",
    "BackendUnavailable",
    "BaseStore",
    "CollectionInfo",
    "CollectionMismatch",
    "CollectionNotFound",
    "Health",
    "Hit",
    "InvalidFilter",
    "InvalidRecord",
    "Record",
    "StoredHashes",
    "VectorStore",
]
