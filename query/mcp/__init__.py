"""``kubevec mcp``: the search tools for agents, over stdio or streamable HTTP (official ``mcp`` SDK).

Tools (``tools.py``): ``vector_search`` (semantic, keyword and metadata filters in one call),
``get_document``, ``resolve_kind`` (a kind's group, apiVersion, versions and top fields), ``related``
(what an object references and what references it) and ``list_facets``. Transports: ``http.py``
(the guard: callers, views, limits, sessions) and ``stdio.py``; ``jsonrpc.py`` has what both need.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio
import uvicorn

from kubevec.core.errors import UnsafeBind
from kubevec.query.access import Authorizer
from kubevec.query.limits import Limits
from kubevec.query.mcp.http import EmbeddedHttpServer, HttpGuard, check_bind, http_app, is_loopback, transport_security
from kubevec.query.mcp.stdio import run_stdio
from kubevec.query.mcp.tools import build_server, caller_view
from kubevec.query.oauth_metadata import ResourceMetadata
from kubevec.query.search import SearchService

__all__ = [
    "EmbeddedHttpServer",
    "HttpGuard",
    "ResourceMetadata",
    "UnsafeBind",
    "build_server",
    "caller_view",
    "check_bind",
    "http_app",
    "is_loopback",
    "run_stdio",
    "serve",
    "transport_security",
]

logger = logging.getLogger(__name__)


def serve(
    service: SearchService,
    *,
    transport: str,
    host: str,
    port: int,
    authorizer: Authorizer,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    limits: Limits | None = None,
    discovery: ResourceMetadata | None = None,
) -> None:
    if transport == "stdio":
        anyio.run(run_stdio, build_server(service.scoped), service.warm)
        return
    app = http_app(
        service,
        host=host,
        authorizer=authorizer,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        allow_unauthenticated=allow_unauthenticated,
        limits=limits,
        metrics=True,
        discovery=discovery,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
