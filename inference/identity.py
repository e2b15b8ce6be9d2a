"""Resource and document identity: the one place that formats and parses ids (kopf's ``Resource`` is the model).

- a resource type is ``ResourceRef(group, version, plural, kind)``; its capability id and payload
  ``resource`` is ``plural.group`` (``plural`` for the core group), as kubectl prints it;
- an object key (what references name) is ``<Kind>/<namespace or _cluster>/<name>``;
- an instance id is ``<cluster>/<namespace or _cluster>/<group or core>/<version>/<Kind>/<name>``;
- payloads spell the core group ``core`` (an empty string cannot be filtered on everywhere).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

CORE: Final = "core"
CLUSTER_SCOPE: Final = "_cluster"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResourceRef:
    """One API resource type at one version; ``group`` is ``""`` for the core group."""

    group: str
    version: str
    plural: str
    kind: str

    @classmethod
    def from_api_version(cls, api_version: str, *, kind: str, plural: str) -> ResourceRef:
        group, _, version = api_version.rpartition("/")
        return cls(group=group, version=version, plural=plural, kind=kind)

    @property
    def resource_id(self) -> str:
        """``plural.group`` (``plural`` for core): the capability id and the payload's ``resource``."""
        return resource_name(plural=self.plural, group=self.group)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def payload_group(self) -> str:
        return self.group or CORE

    def instance_id(self, *, cluster: str, namespace: str | None, name: str) -> str:
        return InstanceId(
            cluster=cluster, namespace=namespace, group=self.group, version=self.version, kind=self.kind, name=name
        ).id


@dataclasses.dataclass(frozen=True, kw_only=True)
class ObjectName:
    """Who an object is, read once from its ``metadata``: what ids, keys, logs and policies use.

    A hostile or half-written object may hold anything under any key: a value that is not of its
    type reads as missing (``""``, ``None``, no labels), so no reader judges it again.
    """

    name: str
    #: ``""`` for a cluster-scoped object.
    namespace: str
    uid: str
    resource_version: str
    generation: int | None
    created: str
    labels: Mapping[str, Any]

    @classmethod
    def of(cls, meta: Mapping[str, Any]) -> ObjectName:
        def text(key: str) -> str:
            value = meta.get(key)
            return value if isinstance(value, str) else ""

        generation, labels = meta.get("generation"), meta.get("labels")
        return cls(
            name=text("name"),
            namespace=text("namespace"),
            uid=text("uid"),
            resource_version=text("resourceVersion"),
            generation=generation if isinstance(generation, int) and not isinstance(generation, bool) else None,
            created=text("creationTimestamp"),
            labels=labels if isinstance(labels, Mapping) else {},
        )

    def key(self, plural: str) -> str:
        """``plural/namespace/name`` (``plural/name`` cluster-wide): how logs and status name an object."""
        return f"{plural}/{self.namespace}/{self.name}" if self.namespace else f"{plural}/{self.name}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class InstanceId:
    """The parts of an instance document id; ``group`` is ``""`` for core, ``namespace`` None when cluster-scoped."""

    cluster: str
    namespace: str | None
    group: str
    version: str
    kind: str
    name: str

    @property
    def id(self) -> str:
        namespace = self.namespace or CLUSTER_SCOPE
        return f"{self.cluster}/{namespace}/{self.group or CORE}/{self.version}/{self.kind}/{self.name}"


def parse_instance_id(document_id: str) -> InstanceId | None:
    """The parts of an instance id, or None if it is not one (names never contain ``/``)."""
    parts = document_id.split("/")
    if len(parts) != 6 or not all(parts):
        return None
    cluster, namespace, group, version, kind, name = parts
    return InstanceId(
        cluster=cluster,
        namespace=None if namespace == CLUSTER_SCOPE else namespace,
        group="" if group == CORE else group,
        version=version,
        kind=kind,
        name=name,
    )


def resource_name(*, plural: str, group: str) -> str:
    """``plural.group`` as kubectl prints it (``plural`` alone for the core group): the one place it is built."""
    return f"{plural}.{group}" if group else plural


def plural_of(resource: str) -> str:
    """The plural of a ``plural.group`` resource name (``deployments.apps`` -> ``deployments``)."""
    return resource.split(".", 1)[0]


def group_of_resource_id(resource_id: str) -> str:
    """The API group of a capability id (``""`` for core): plurals never contain dots."""
    return resource_id.partition(".")[2]


def object_key(*, kind: str, namespace: str | None, name: str) -> str:
    """``Kind/namespace/name`` (``Kind/_cluster/name`` when cluster-scoped): how references name an object.

    References rarely say their target's group or version, so relationships match on kind,
    namespace and name within one cluster.
    """
    return f"{kind}/{namespace or CLUSTER_SCOPE}/{name}"


def parse_object_key(key: str) -> tuple[str, str | None, str] | None:
    """``(kind, namespace, name)`` of an object key, or None if it is not one."""
    parts = key.split("/")
    if len(parts) != 3 or not all(parts):
        return None
    kind, namespace, name = parts
    return kind, None if namespace == CLUSTER_SCOPE else namespace, name
