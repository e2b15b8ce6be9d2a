"""Resources and REST paths: one listable resource at its version, and every API path, built here only."""

from __future__ import annotations

import dataclasses

from kubevec.inference.identity import ResourceRef


@dataclasses.dataclass(frozen=True, kw_only=True)
class ApiResource:
    """One listable resource at its preferred version: its identity (``ref``) and what discovery says of it."""

    ref: ResourceRef
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    def list_path(self, namespace: str | None = None) -> str:
        ref = self.ref
        return api_path(
            group=ref.group, version=ref.version, plural=ref.plural, namespace=namespace if self.namespaced else None
        )


def api_path(
    *,
    group: str,
    version: str,
    plural: str | None = None,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """A Kubernetes REST path, built here and nowhere else (``/api/v1``, ``/apis/apps/v1/namespaces/x/deployments``)."""
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if plural is None:
        return path
    if namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    if name is not None:
        path += f"/{name}"
        if subresource:
            path += f"/{subresource}"
    return path
