"""``kubevec mcp``: the agents' tools over stdio or HTTP, as a process of its own."""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands, open_store, search_service

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings
    from kubevec.query.search import SearchService

    pass

logger = logging.getLogger("kubevec")


def register(commands: Commands) -> None:
    mcp = commands.add("mcp", mcp_command, help="serve the search tools over the Model Context Protocol")
    mcp.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio", help="stdio (default) or streamable HTTP at /mcp"
    )
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default loopback)")
    mcp.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    mcp.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        help="Host header to accept besides loopback, e.g. kubevec.tools.svc:* (repeatable; '*' accepts any)",
    )
    mcp.add_argument("--allowed-origin", action="append", default=None, help="Origin header to accept (repeatable)")
    mcp.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="serve HTTP on a non-loopback address without KUBEVEC_MCP_TOKEN (logged as a warning)",
    )


async def _load_the_model(service: SearchService) -> None:
    """The model the service will embed queries with, loaded now: the very one it keeps (loading
    another just to check held a second copy of the model for the server's life, ~190 MiB)."""
    await service.fresh(force=True)
    if service.embedder is not None:
        _ = service.embedder.name


def mcp_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.controller.kube.reviews import build_authorizer
    from kubevec.query.mcp import serve

    store = open_store(settings, existing=True, follow=True)
    service = search_service(settings, store, embedder=True, one_shot=False, audit=True)
    asyncio.run(_load_the_model(service))  # a model that cannot load is an error now, not at the first query
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
    return 0
