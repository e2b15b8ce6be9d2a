"""Backend-agnostic vector stores: one protocol, portable filters, Chroma / Qdrant / memory."""

from backends.base import BaseStore, CollectionInfo, VectorStore
from backends.errors import (
    BackendError,
    BackendUnavailable,
    CollectionMismatch,
    CollectionNotFound,
    InvalidFilter,
    InvalidRecord,
)
from backends.records import Health, Hit, Record, StoredHashes

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
