"""Kubernetes API errors as classes, chosen by HTTP status in one place (as kopf's ``clients/errors.py``)."""

from __future__ import annotations

from typing import Final


class KubeError(RuntimeError):
    """A Kubernetes API call failed; the message names the path and the status.

    The class says what happened (chosen by HTTP status in :func:`kube_error`, the one place that
    reads it), so callers catch :class:`KubeForbidden` or :class:`KubeNotFound` instead of reading
    ``reason`` strings, as kopf's ``clients/errors.py`` does.
    """

    def __init__(self, message: str, *, reason: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message
        self.status = status


class KubeUnauthorized(KubeError):
    """401: the credentials are not (or no longer) accepted."""


class KubeForbidden(KubeError):
    """403: RBAC does not allow it."""


class KubeNotFound(KubeError):
    """404: no such object, resource or path."""


class KubeConflict(KubeError):
    """409: exists already, or changed meanwhile."""


class KubeServerError(KubeError):
    """5xx: the API server (or an aggregated API behind it) is failing."""


_BY_STATUS: Final[dict[int, type[KubeError]]] = {
    401: KubeUnauthorized,
    403: KubeForbidden,
    404: KubeNotFound,
    409: KubeConflict,
}


def kube_error(message: str, *, status: int | None, reason: str) -> KubeError:
    """The error class for an HTTP status: the only place a status becomes a type."""
    if status is None:
        return KubeError(message, reason=reason)
    kind = _BY_STATUS.get(status) or (KubeServerError if status >= 500 else KubeError)
    return kind(message, reason=reason, status=status)
