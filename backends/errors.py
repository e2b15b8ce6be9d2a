"""Our own error types: callers never see a chromadb or qdrant_client exception."""

from __future__ import annotations


class BackendError(RuntimeError):
    """The store refused an operation (bad request, inconsistent collection, ...)."""


class BackendUnavailable(BackendError):
    """The store cannot be reached or is temporarily failing; retrying later may succeed."""


class InvalidFilter(ValueError):
    """A filter is malformed: unknown operator, wrong type, too deep. The message says which."""


class InvalidRecord(ValueError):
    """A record breaks the contract (wrong dimension, reserved or non-scalar metadata)."""


class CollectionMismatch(BackendError):
    """An existing collection was built with another dimension, distance or embedder."""


class CollectionNotFound(BackendError):
    """The collection does not exist (nothing indexed yet, or a generation switched since its name was read)."""
