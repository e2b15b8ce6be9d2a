"""MCP over stdin/stdout: too-deep requests answered before the SDK's parser sees them."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Coroutine
from io import TextIOWrapper
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from kubevec.core.nesting import json_too_deep
from kubevec.query.mcp.jsonrpc import MAX_MESSAGE_DEPTH, request_id, rpc_error

logger = logging.getLogger(__name__)


class GuardedStdio:
    """stdin/stdout for the SDK's stdio transport that answer too-deep requests themselves.

    A too-deep line never reaches the SDK (whose JSON parser would fail and answer nothing, so the
    client would wait forever); it gets a JSON-RPC error with its own id instead. Both writers take
    one lock per line, so answers never interleave.
    """

    def __init__(self, *, stdin: anyio.AsyncFile[str], stdout: anyio.AsyncFile[str]) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._lock = anyio.Lock()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._stdin:
            if not json_too_deep(line, limit=MAX_MESSAGE_DEPTH):
                yield line
                continue
            error = rpc_error(
                request_id(line), f"Request is nested deeper than {MAX_MESSAGE_DEPTH} levels (filters allow 8)"
            )
            await self.write(json.dumps(error) + "\n")
            await self.flush()

    async def write(self, data: str) -> None:
        async with self._lock:
            await self._stdout.write(data)

    async def flush(self) -> None:
        async with self._lock:
            await self._stdout.flush()


async def run_stdio(server: MCPServer, warm: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
    """Serve over stdin/stdout; fd 1 points at stderr meanwhile, so stray prints miss the wire.

    ``warm`` runs beside the server from the start (the search service's index builds)."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    stdin = anyio.wrap_file(TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(TextIOWrapper(wire_out, encoding="utf-8"))
    guard = GuardedStdio(stdin=stdin, stdout=stdout)
    async with (
        stdio_server(stdin=guard, stdout=guard) as (read_stream, write_stream),  # type: ignore[arg-type]
        anyio.create_task_group() as tasks,
    ):
        if warm is not None:
            tasks.start_soon(warm)
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        tasks.cancel_scope.cancel()  # the client is gone: a build still running is not waited for
