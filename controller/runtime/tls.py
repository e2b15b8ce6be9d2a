"""Smaller TLS read buffers for asyncio's SSL transport: kopf holds one connection per watched resource.

Python 3.11's ``asyncio.sslproto.SSLProtocol`` gives every connection a 256 KiB read buffer
(``max_size``), allocated and zeroed up front. kopf watches each resource on its own connection
(aiohttp has no HTTP/2 to multiplex them), so at 400 CRDs plus the built-in kinds the controller
holds ~460 connections, ~115 MiB of buffers that mostly wait for the next event. TLS records are
at most 16 KiB, so a 32 KiB buffer still takes any record in one read; large responses just take
more reads. Measured with 400 loopback connections (client and server in one process): 227 MiB
of RSS with the default, 51 MiB with 32 KiB; ``make bench-scale`` restart RSS -70 MiB at 400 CRDs.
"""

from __future__ import annotations

from asyncio import sslproto
from typing import Final

READ_BUFFER_BYTES: Final = 32 * 1024


def small_tls_buffers(*, size: int = READ_BUFFER_BYTES) -> None:
    """Install, for every SSL connection opened after this call, a read buffer of ``size`` bytes."""
    sslproto.SSLProtocol.max_size = size
