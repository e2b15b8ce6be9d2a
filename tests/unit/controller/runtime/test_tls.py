"""Connections opened after small_tls_buffers() read into 32 KiB, not Python's 256 KiB per connection."""

from __future__ import annotations

import asyncio
import ssl
from asyncio import sslproto

import pytest

from kubevec.controller.runtime.tls import READ_BUFFER_BYTES, small_tls_buffers


def new_protocol() -> sslproto.SSLProtocol:
    loop = asyncio.get_running_loop()
    return sslproto.SSLProtocol(
        loop, asyncio.Protocol(), ssl.create_default_context(), loop.create_future(), server_hostname="example.com"
    )


async def test_new_connections_get_the_small_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    # As Python ships it (an in-process controller of an earlier test may have installed ours
    # already: it is process-wide), put back after the test.
    monkeypatch.setattr(sslproto.SSLProtocol, "max_size", 256 * 1024)
    assert len(new_protocol()._ssl_buffer) == 256 * 1024
    small_tls_buffers()
    protocol = new_protocol()
    assert len(protocol._ssl_buffer) == READ_BUFFER_BYTES == 32 * 1024
    protocol.get_buffer(1 << 20)  # a large read hint does not grow it past the cap
    assert len(protocol._ssl_buffer) == READ_BUFFER_BYTES
