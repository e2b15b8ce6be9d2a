"""Watch events into the engine's queue: the fast path, never the source of truth.

kopf's handlers call one ``observe_*`` method per event and return at once: an object event
becomes one queued document (or delete), a CRD event a capability (and, on deletion, a purge of
its instances), a SyncPolicy event a new effective policy and a resync request. Nothing here
waits for the store; a missed or failed event is repaired by the next resync
(``controller/sync/reconcile.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubevec.controller.kube.client import ClusterReader
from kubevec.controller.kube.resources import ApiResource
from kubevec.controller.kube.versions import crd_version, version_priority
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.runtime.tracing import tracer
from kubevec.controller.sync.documents import DocumentBuilder
from kubevec.controller.sync.engine import SyncEngine
from kubevec.controller.sync.policy import EffectivePolicy, SyncPolicy
from kubevec.controller.sync.reconcile import CRD_RESOURCE
from kubevec.core.errors import BackendError, KubeError, PolicyError
from kubevec.inference.bodies import Body, metadata_of
from kubevec.inference.documents import CAPABILITIES, INSTANCES, Document
from kubevec.inference.identity import ObjectName, ResourceRef, resource_name

logger = logging.getLogger(__name__)


class EventRouter:
    """Owns what events teach: the SyncPolicies seen so far, the effective policy, running purges."""

    def __init__(
        self,
        *,
        cluster: str,
        engine: SyncEngine,
        documents: DocumentBuilder,
        metrics: Metrics,
        request_resync: Callable[[], None],
        kube: ClusterReader | None = None,
        resources: Callable[[], Mapping[tuple[str, str], ApiResource]] | None = None,
    ) -> None:
        self._cluster = cluster
        self._kube = kube
        self._resources = resources or dict
        self._engine = engine
        self._documents = documents
        self._metrics = metrics
        self._request_resync = request_resync
        self.policies: dict[str, SyncPolicy] = {}
        self.policy = EffectivePolicy()
        self.policy_error: str | None = None  # the last invalid SyncPolicy, until a valid edit or a resync
        self.purges: set[asyncio.Task[None]] = set()  # each removes itself when done
        #: (group, kind) -> the version a CRD's instances are read at, from its latest event.
        self.crd_versions: dict[tuple[str, str], str] = {}
        #: Objects whose latest warning changed, being read again (each once, however many events come).
        self.refetching: dict[str, asyncio.Task[None]] = {}

    def observe_object(
        self, *, group: str, version: str, plural: str, kind: str, event_type: str | None, body: Body
    ) -> None:
        who = ObjectName.of(metadata_of(body))
        attributes = {
            "k8s.resource": resource_name(plural=plural, group=group),
            "k8s.event.type": event_type or "LIST",
            "k8s.namespace": who.namespace,
            "k8s.name": who.name,
        }
        with tracer().start_as_current_span("kubevec.event", attributes=attributes):
            self._observe_object(
                group=group, version=version, plural=plural, kind=kind, event_type=event_type, body=body
            )

    def _observe_object(
        self, *, group: str, version: str, plural: str, kind: str, event_type: str | None, body: Body
    ) -> None:
        received = self._engine.clock.monotonic()
        ref = ResourceRef(group=group, version=version, plural=plural, kind=kind)
        self._metrics.events.labels(resource=ref.resource_id, type=event_type or "LIST").inc()
        if not self.policy.watches(group=group, kind=kind, plural=plural):
            return
        current = self.crd_versions.get((group, kind))
        if current is not None and version_priority(version) > version_priority(current):
            # The watch of a version its CRD has just moved on from, before kopf stops it. (A newer
            # version's events may come before the CRD's own event: those are kept.)
            return
        who = ObjectName.of(metadata_of(body))
        document_id = ref.instance_id(cluster=self._cluster, namespace=who.namespace or None, name=who.name)
        if event_type == "DELETED" or not self.policy.admits(body):
            self._engine.submit_delete(INSTANCES, document_id, received=received)
            return
        document = self._documents.instance(
            body, plural=plural, policy=self.policy.instance_policy, document_id=document_id
        )
        if isinstance(document, Document):
            self._engine.submit(document, received=received)

    def observe_warning(self, *, event_type: str | None, body: Body) -> None:
        """A Warning Event: when it changes its object's latest warning, that object is read again and
        rebuilt (metadata only: the text, hence the vector, stays). The resync repairs a failed read."""
        self._metrics.events.labels(resource="events", type=event_type or "LIST").inc()
        uid = self._documents.warnings.observe(event_type=event_type, body=body)
        involved = body.get("involvedObject")
        if uid is not None and isinstance(involved, Mapping):
            self.refetch(uid=uid, involved=involved)

    def refetch(self, *, uid: str, involved: Mapping[str, Any]) -> None:
        """Read an object again and rebuild it (its warning or its template's note changed), once at a time.

        ``involved``: ``apiVersion``, ``kind``, ``name`` and ``namespace``, as an Event names its object."""
        if uid in self.refetching or self._kube is None:
            return
        task = asyncio.create_task(self._refetch(involved), name=f"kubevec-refetch-{uid}")
        self.refetching[uid] = task
        task.add_done_callback(lambda _: self.refetching.pop(uid, None))

    async def _refetch(self, involved: Mapping[str, Any]) -> None:
        group = str(involved.get("apiVersion") or "").rpartition("/")[0]
        resource = self._resources().get((group, str(involved.get("kind") or "")))
        name, namespace = involved.get("name"), involved.get("namespace")
        if resource is None or self._kube is None or not isinstance(name, str):
            return  # a kind not synced (or not discovered yet): the next resync decides
        try:
            body = await self._kube.get_object(
                resource, name, namespace=namespace if isinstance(namespace, str) else None
            )
        except KubeError as exc:
            logger.warning("Could not read an object a warning is about object=%s/%s error=%s", namespace, name, exc)
            return
        if body is not None:
            ref = resource.ref
            self.observe_object(
                group=ref.group, version=ref.version, plural=ref.plural, kind=ref.kind, event_type="MODIFIED", body=body
            )

    def observe_crd(self, *, event_type: str | None, body: Body) -> None:
        attributes = {
            "k8s.resource": CRD_RESOURCE.ref.resource_id,
            "k8s.event.type": event_type or "LIST",
            "k8s.name": str(metadata_of(body).get("name", "")),
        }
        with tracer().start_as_current_span("kubevec.event", attributes=attributes):
            self._observe_crd(event_type=event_type, body=body)

    def _observe_crd(self, *, event_type: str | None, body: Body) -> None:
        received = self._engine.clock.monotonic()
        self._metrics.events.labels(resource=CRD_RESOURCE.ref.resource_id, type=event_type or "LIST").inc()
        name = str(metadata_of(body).get("name", ""))
        spec = body.get("spec") or {}
        key = (str(spec.get("group", "")), str((spec.get("names") or {}).get("kind") or ""))
        if event_type == "DELETED":
            self._engine.submit_delete(CAPABILITIES, name, received=received)
            self.crd_versions.pop(key, None)
            if key[1]:
                self._start_purge(group=key[0], kind=key[1])
            return
        version = crd_version(body)
        if version is not None and key[1]:
            before = self.crd_versions.get(key)
            self.crd_versions[key] = version
            # A changed CRD may have moved its instances to another version (kopf lists them there
            # again): purge the rest. Unknown before (start-up's listing went to the resync) counts as
            # changed; a CRD just added has no instances elsewhere.
            if event_type == "MODIFIED" and before != version:
                self._start_purge(group=key[0], kind=key[1], keep_version=version)
                if before is not None and version_priority(version) > version_priority(before):
                    # Back to an older version: its watch's listing may have come before this event
                    # and been taken for a late one of the version left. Rare; a resync restores them.
                    self._request_resync()
        document = self._documents.capability(body)
        if isinstance(document, Document):
            self._engine.submit(document, received=received)

    def observe_policy(self, *, event_type: str | None, body: Body) -> None:
        name = str(metadata_of(body).get("name", ""))
        if event_type == "DELETED":
            self.policies.pop(name, None)
        else:
            try:
                self.policies[name] = SyncPolicy.from_body(body)
            except PolicyError as exc:
                self._metrics.errors.labels(stage="policy").inc()
                logger.error("Ignored an invalid SyncPolicy name=%s error=%s", name, exc)
                self.policies.pop(name, None)
                self.policy_error = str(exc)
        new = EffectivePolicy.merge(policy.spec for _, policy in sorted(self.policies.items()))
        if new != self.policy:
            self.policy = new
            logger.info("Applied SyncPolicies count=%d", len(self.policies))
            self._request_resync()

    def _start_purge(self, *, group: str, kind: str, keep_version: str | None = None) -> None:
        task = asyncio.create_task(self._purge(group=group, kind=kind, keep_version=keep_version))
        self.purges.add(task)
        task.add_done_callback(self.purges.discard)

    async def _purge(self, *, group: str, kind: str, keep_version: str | None) -> None:
        try:
            await self._engine.purge_resource(group=group, kind=kind, keep_version=keep_version)
            if keep_version is None:
                logger.info("Purged instances of a deleted CRD group=%s kind=%s", group, kind)
            else:
                logger.info(
                    "Purged instances at versions a CRD left group=%s kind=%s version=%s", group, kind, keep_version
                )
        except BackendError as exc:  # the store is down: the next resync collects them
            logger.warning("Failed to purge instances group=%s kind=%s error=%s", group, kind, exc)
