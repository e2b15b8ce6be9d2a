"""``kubevec mcp``: the agents' tools over stdio or HTTP, as a process of its own."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import open_embedder, open_store, search_service
from kubevec.controller.settings import Settings
from kubevec.core.errors import CommandError

if TYPE_CHECKING:
    pass

logger = logging.getLogger("kubevec")


def mcp_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.controller.kube.reviews import build_authorizer
    from kubevec.core.errors import AccessConfigError, UnsafeBind
    from kubevec.query.mcp import serve

    store = open_store(settings, existing=True)
    open_embedder(settings)  # a model that cannot load is an error now, not at the first query
    service = search_service(settings, store, embedder=True, one_shot=False)
    try:
        authorizer = build_authorizer(settings, placements=lambda: service.placements(settings.cluster_name))
        serve(
            service,
            transport=args.transport,
            host=args.host,
            port=args.port,
            authorizer=authorizer,
            allowed_hosts=args.allowed_host or settings.mcp_allowed_hosts,
            allowed_origins=args.allowed_origin or settings.mcp_allowed_origins,
            allow_unauthenticated=args.allow_unauthenticated,
            limits=settings.mcp_limits(),
            discovery=settings.mcp_discovery(),
        )
    except (UnsafeBind, AccessConfigError) as exc:
        raise CommandError(str(exc)) from exc
    return 0
