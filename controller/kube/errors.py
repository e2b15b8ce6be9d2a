"""Kubernetes API errors as classes, chosen by HTTP status in one place (as kopf's ``clients/errors.py``)."""

from __future__ import annotations

from typing import Final

from kubevec.core.errors import KubeConflict, KubeError, KubeForbidden, KubeNotFound, KubeServerError, KubeUnauthorized

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
