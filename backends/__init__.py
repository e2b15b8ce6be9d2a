"""Backend-agnostic vector stores: one protocol, portable filters; Chroma, Qdrant, pgvector, LanceDB, Weaviate, Redis, memory."""

from typing import TYPE_CHECKING, Any

from kubevec.backends.records import Health, Hit, Record, StoredHashes
from kubevec.core.errors import (
    BackendError,
    BackendUnavailable,
    CollectionMismatch,
    CollectionNotFound,
    InvalidFilter,
    InvalidRecord,
)

if TYPE_CHECKING:
    from kubevec.backends.base import BaseStore
    from kubevec.backends.protocol import CollectionInfo, VectorStore

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


def __getattr__(name: str) -> Any:
    """The store classes on first use: naming a filter or a record (``kubevec --help`` builds the search
    flags from them) does not import the store machinery and asyncio."""
    if name in ("CollectionInfo", "VectorStore"):
        from kubevec.backends import protocol

        return getattr(protocol, name)
    if name == "BaseStore":
        from kubevec.backends import base

        return base.BaseStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
