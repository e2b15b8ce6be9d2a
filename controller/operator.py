"""kopf wiring: a registry of thin handlers that delegate to :class:`kubevec.controller.app.App`.

Nothing here writes to watched objects: only ``on.event`` handlers are used (they keep no state
on objects: no annotations, no finalizers), posting of Kubernetes Events is off, and the
controller's one write is the status of its own SyncPolicy objects (done by the App).
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

from kubevec.controller import kopf_private
from kubevec.controller.app import App
from kubevec.controller.kube.client import load_configuration
from kubevec.controller.runtime.health import WATCH_BACKOFFS
from kubevec.controller.runtime.peering import PeeringIdentity
from kubevec.controller.settings import Settings
from kubevec.controller.sync.policy import GROUP, PLURAL, VERSION, watchable
from kubevec.inference.bodies import as_body


def build_registry(*, settings: Settings, app: App | None = None) -> kopf.OperatorRegistry:
    """A fresh registry; ``app`` may be pre-built (tests inject stores and embedders)."""
    kubevec_settings = settings
    registry = kopf.OperatorRegistry()

    def _watch_instances(resource: kopf.Resource) -> bool:
        return watchable(
            group=resource.group,
            plural=resource.plural,
            verbs=list(resource.verbs),
            preferred=resource.preferred,
            groups=kubevec_settings.sync.api_groups,
        )

    @kopf.on.login(registry=registry)
    async def login(settings: kopf.OperatorSettings, **_: Any) -> kopf.ConnectionInfo:
        return connection_info(
            load_configuration(kubevec_settings.kubeconfig, context=kubevec_settings.kube_context),
            trust_env=settings.networking.trust_env,
        )

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
        memo.app = app or App(settings=kubevec_settings)
        configure(settings, peering=memo.app.peering)
        errors = memo.app.metrics.errors
        memo.app.handover.begin()
        kopf_private.install(
            handover=memo.app.handover, on_discovery_error=lambda: errors.labels(stage="discovery").inc()
        )
        await memo.app.start()

    @kopf.on.cleanup(registry=registry)
    async def cleanup(memo: kopf.Memo, **_: Any) -> None:
        if hasattr(memo, "app"):
            await memo.app.stop()

    # Every handler is ``async def``: kopf runs plain ``def`` handlers in worker threads, and the
    # App's queue, events and tasks belong to the event loop.
    @kopf.on.event(_watch_instances, registry=registry)
    async def on_object(event: kopf.RawEvent, resource: kopf.Resource, memo: kopf.Memo, **_: Any) -> None:
        memo.app.events.observe_object(
            group=resource.group,
            version=resource.version,
            plural=resource.plural,
            kind=resource.kind,
            event_type=event.get("type"),
            body=as_body(event["object"]),
        )

    # Warning Events (read, never written): each object's latest goes into its document's metadata.
    @kopf.on.event(group="", version="v1", plural="events", field="type", value="Warning", registry=registry)
    async def on_warning(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
        memo.app.events.observe_warning(event_type=event.get("type"), body=as_body(event["object"]))

    @kopf.on.event("apiextensions.k8s.io", "customresourcedefinitions", registry=registry)
    async def on_crd(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
        memo.app.events.observe_crd(event_type=event.get("type"), body=as_body(event["object"]))

    @kopf.on.event(GROUP, VERSION, PLURAL, registry=registry)
    async def on_policy(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
        memo.app.events.observe_policy(event_type=event.get("type"), body=as_body(event["object"]))

    return registry


def connection_info(configuration: Any, *, trust_env: bool) -> kopf.ConnectionInfo:
    """kopf's credentials from the client library's configuration (as kopf.login_via_client does)."""
    header = configuration.get_api_key_with_prefix("BearerToken") or configuration.get_api_key_with_prefix(
        "authorization"
    )
    parts = header.split(" ", 1) if header else []
    scheme, token = (None, None) if not parts else (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    return kopf.ConnectionInfo(
        server=configuration.host,
        ca_path=configuration.ssl_ca_cert,
        insecure=not configuration.verify_ssl,
        username=configuration.username or None,
        password=configuration.password or None,
        scheme=scheme,
        token=token,
        certificate_path=configuration.cert_file,
        private_key_path=configuration.key_file,
        trust_env=trust_env,
    )


class NoDiffBase(kopf.DiffBaseStorage):
    """No last-handled state: kubevec has only ``on.event`` handlers, which never diff.

    kopf's default builds an "essence" of every event's body (a deep copy, then a second one in
    the progress storage) to compare with the last one it stored on the object; with event
    handlers only nothing reads it, and at 20,000 objects those copies were ~9% of a restart.
    """

    def build(self, *, body: Any, extra_fields: Any = None) -> Any:
        return None

    def fetch(self, *, body: Any) -> Any:
        return None

    def store(self, *, body: Any, patch: Any, essence: Any) -> None:
        pass


class NoProgress(kopf.ProgressStorage):
    """No handler progress on watched objects: nothing is stored, nothing is ever patched."""

    def fetch(self, *, key: Any, body: Any) -> Any:
        return None

    def store(self, *, key: Any, record: Any, body: Any, patch: Any) -> None:
        pass

    def purge(self, *, key: Any, body: Any, patch: Any) -> None:
        pass

    def touch(self, *, body: Any, patch: Any, value: Any) -> None:
        pass

    def clear(self, *, essence: Any) -> Any:
        return essence


def configure(settings: kopf.OperatorSettings, *, peering: PeeringIdentity | None = None) -> None:
    """kopf settings that keep the controller read-only towards what it watches."""
    settings.persistence.diffbase_storage = NoDiffBase()
    settings.persistence.progress_storage = NoProgress()
    if peering is not None:
        settings.peering.lifetime = peering.lifetime
        settings.peering.mandatory = True  # never run unpeered by accident: a missing object is an error
    settings.posting.enabled = False  # no Events about watched objects
    settings.posting.level = logging.CRITICAL
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.networking.error_backoffs = list(WATCH_BACKOFFS)


def operator_kwargs(settings: Settings, *, peering: PeeringIdentity | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"standalone": peering is None}
    if peering is not None:
        kwargs.update(peering_name=peering.name, identity=peering.identity, priority=peering.priority)
    if settings.namespace:
        kwargs["namespaces"] = [settings.namespace]
    else:
        kwargs["clusterwide"] = True
    return kwargs
