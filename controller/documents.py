"""Object bodies into documents, for events and the resync alike: bad input is counted and logged once.

A malformed object, CRD or built-in schema never stops anything else: it gets
``kubevec_errors_total{stage="inference"}`` and one warning per object and problem.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Mapping
from typing import Any

from controller.kube import ApiResource
from controller.metrics import Metrics
from inference.bodies import Body, metadata_of
from inference.capabilities import describe_builtin, describe_crd
from inference.documents import Document, InferenceError
from inference.instances import InstancePolicy, build_instance

logger = logging.getLogger(__name__)


#: capability documents remembered by (uid, resourceVersion); far more than clusters have CRDs.
CAPABILITY_CACHE_SIZE = 4096


class DocumentBuilder:
    def __init__(self, *, cluster: str, metrics: Metrics) -> None:
        self.cluster = cluster
        self._metrics = metrics
        self._reported: set[str] = set()
        self._capabilities: collections.OrderedDict[tuple[str, str], Document] = collections.OrderedDict()

    def instance(self, body: Body, *, plural: str, policy: InstancePolicy) -> Document | None:
        try:
            return build_instance(body, plural=plural, cluster=self.cluster, policy=policy).to_document()
        except InferenceError as exc:
            self._report(f"{plural}/{metadata_of(body).get('name')}", exc)
            return None

    def capability(self, crd: Mapping[str, Any]) -> Document | None:
        """The CRD's capability document; one CRD version is described once.

        kopf's listing and the resync both see every CRD at start-up, and each resync sees it
        again: describing a large schema is the costliest step of a restart, so the document is
        kept per (uid, resourceVersion) (bounded, least recently used first out).
        """
        meta = metadata_of(crd)
        key = (str(meta.get("uid") or ""), str(meta.get("resourceVersion") or ""))
        if all(key) and (cached := self._capabilities.get(key)) is not None:
            self._capabilities.move_to_end(key)
            return cached
        try:
            document = describe_crd(crd, cluster=self.cluster).to_document()
        except InferenceError as exc:
            self._report(f"crd/{meta.get('name')}", exc)
            return None
        if all(key):
            self._capabilities[key] = document
            if len(self._capabilities) > CAPABILITY_CACHE_SIZE:
                self._capabilities.popitem(last=False)
        return document

    def builtin(self, resource: ApiResource, *, components: Mapping[str, Any]) -> Document | None:
        schema = _find_schema(components, group=resource.group, version=resource.version, kind=resource.kind)
        try:
            return describe_builtin(
                kind=resource.kind,
                group=resource.group,
                version=resource.version,
                plural=resource.plural,
                namespaced=resource.namespaced,
                short_names=resource.short_names,
                categories=resource.categories,
                schema=schema,
                components=components,
                cluster=self.cluster,
            ).to_document()
        except InferenceError as exc:
            self._report(f"builtin/{resource.name}", exc)
            return None

    def _report(self, identity: str, exc: Exception) -> None:
        self._metrics.errors.labels(stage="inference").inc()
        key = f"{identity}:{exc}"
        if key not in self._reported:  # once per object and problem, not on every event
            if len(self._reported) > 10_000:
                self._reported.clear()  # bounded; a problem that persists is logged again, once
            self._reported.add(key)
            logger.warning("Skipped an object that cannot be indexed object=%s error=%s", identity, exc)


def _find_schema(components: Mapping[str, Any], *, group: str, version: str, kind: str) -> Mapping[str, Any] | None:
    for schema in components.values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            if gvk.get("group", "") == group and gvk.get("version") == version and gvk.get("kind") == kind:
                return schema  # type: ignore[no-any-return]
    return None
