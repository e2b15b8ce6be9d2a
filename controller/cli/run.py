"""``kubevec run``: the controller."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands

if TYPE_CHECKING:
    from kubevec.controller.app import App
    from kubevec.controller.settings import Settings

logger = logging.getLogger("kubevec")


def register(commands: Commands) -> None:
    run = commands.add(
        "run", run_command, help="run the controller against the current cluster (KUBECONFIG or in-cluster)"
    )
    run.add_argument("--reindex", action="store_true", help="drop both collections first and rebuild them")
    run.add_argument("-n", "--namespace", help="watch this namespace only (default: all, as KUBEVEC_NAMESPACE)")


def run_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.namespace is not None:
        settings = settings.model_copy(update={"namespace": args.namespace})
    import asyncio

    import kopf

    from kubevec.controller.app import App
    from kubevec.controller.kube.client import load_configuration, preflight
    from kubevec.controller.operator import build_registry, operator_kwargs
    from kubevec.controller.runtime.peering import PeeringIdentity
    from kubevec.query.mcp import check_bind

    authenticated = bool(settings.mcp_token or settings.mcp_tokens_file or settings.mcp_kubernetes_auth)
    if settings.mcp_port:  # before kopf starts: the same check the server makes, as one line
        check_bind(settings.server.host, authenticated=authenticated, port=settings.mcp_port)
    # one clear line (a KubeError) for a missing kubeconfig or an unreachable API server, before kopf starts
    server_version = preflight(load_configuration(settings.kubeconfig, context=settings.kube_context))

    peering = (
        PeeringIdentity.create(
            name=settings.peering, priority=settings.peering_priority, lifetime=settings.peering_lifetime_seconds
        )
        if settings.peering
        else None
    )
    app = App(settings=settings, peering=peering)
    if args.reindex:
        asyncio.run(drop_collections(app, settings))
    logger.info(
        "Starting the controller cluster=%s server=%s store=%s embedder=%s",
        settings.cluster_name,
        server_version,
        f"{settings.store.backend}:{app.store.location}",
        app.embedder.name,
    )
    registry = build_registry(settings=settings, app=app)
    from kubevec.controller.runtime.tracing import configure as configure_tracing

    tracing = settings.tracing
    provider = configure_tracing(
        endpoint=tracing.endpoint,
        service_name=tracing.service_name,
        sample_ratio=tracing.sample_ratio,
        cluster=settings.cluster_name,
    )
    if provider is not None:
        logger.info("Tracing to an OTLP collector endpoint=%s sample_ratio=%s", tracing.endpoint, tracing.sample_ratio)
    try:
        asyncio.run(kopf.operator(registry=registry, **operator_kwargs(settings, peering=peering)))
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still batched
    return 0


async def drop_collections(app: App, settings: Settings) -> None:
    """Drop the active generation's collections and the pointer: the rebuild starts at generation 0.

    The change history cannot be rebuilt from the cluster, so it stays (unless a migrated generation
    holds it: generation 0 would not read it)."""
    from kubevec.controller.serving import active_collections
    from kubevec.inference.change_records import CHANGES

    names, _ = await active_collections(app.store, settings=settings)
    kept = names.get(CHANGES)
    if kept is not None and kept != settings.collection(CHANGES):
        kept = None  # a migrated generation's history: after the pointer goes, nothing would read it
    for name in [*(n for n in names.values() if n != kept), settings.pointer]:
        await app.store.drop_collection(name)
        logger.info("Dropped collection=%s for a reindex", name)
    if kept is not None:
        logger.info("Kept the change history for a reindex collection=%s", kept)
