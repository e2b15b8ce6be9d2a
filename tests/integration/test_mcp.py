"""`kubevec mcp` end to end with the official SDK client, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from backends.chroma import ChromaStore
from inference.embedders.local import LocalEmbedder
from query.indexing import index_crds
from tests.conftest import SHARED_CRDS
from tests.controlplane.cluster import free_port

pytestmark = pytest.mark.integration
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


@pytest.fixture(scope="module")
def store_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("mcp-store") / "chroma"

    async def build() -> None:
        store = ChromaStore(path=str(path))
        await index_crds(
            paths=[SHARED_CRDS / "cert-manager", SHARED_CRDS / "cloudnative-pg"],
            store=store,
            embedder=LocalEmbedder(),
            collection="capabilities",
            cluster="mcp",
            progress=None,
        )
        await store.close()

    asyncio.run(build())
    return {**os.environ, "KUBEVEC_STORE__PATH": str(path), "KUBEVEC_LOG_LEVEL": "WARNING"}


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def exercise(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) >= {"vector_search", "get_document", "list_facets"}
    schema = (
        tools["vector_search"].input_schema
        if hasattr(tools["vector_search"], "input_schema")
        else tools["vector_search"].inputSchema
    )
    assert "filter" in schema["properties"]
    assert "capabilities" in json.dumps(schema["properties"]["collection"])
    found = await client.call_tool(
        "vector_search",
        {"query": "TLS certificate stored in a secret, renewed automatically", "k": 3, "format": "json"},
    )
    results = json.loads(text_of(found))
    assert results[0]["id"] == "certificates.cert-manager.io"
    assert 0 <= results[0]["score"] <= 1
    document = json.loads(
        text_of(
            await client.call_tool("get_document", {"collection": "capabilities", "id": "poolers.postgresql.cnpg.io"})
        )
    )
    assert document["metadata"]["kind"] == "Pooler"
    facets = await client.call_tool("list_facets", {"collection": "capabilities", "field": "group"})
    assert "postgresql.cnpg.io" in text_of(facets)
    bad = await client.call_tool("vector_search", {"collection": "capabilities"})
    assert bad.is_error if hasattr(bad, "is_error") else bad.isError
    assert "Give a query, a keyword or a filter" in text_of(bad)
    missing = await client.call_tool("get_document", {"collection": "capabilities", "id": "nope"})
    assert "No document" in text_of(missing)


def test_stdio_transport(store_env: dict[str, str]) -> None:
    async def run() -> None:
        async with Client(StdioServerParameters(command=KUBEVEC, args=["mcp"], env=store_env)) as client:
            await exercise(client)

    asyncio.run(run())


@pytest.fixture
def http_server(store_env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    env = {**store_env, "KUBEVEC_MCP_TOKEN": "s3cret"}
    proc = subprocess.Popen(
        [KUBEVEC, "mcp", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2)
            except urllib.error.HTTPError:
                break  # the server answers (401 without a token)
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stderr.read().decode() if proc.stderr else "no output") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_http_transport_with_bearer_token(http_server: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(http_server, data=b"{}", method="POST"), timeout=5)
    assert refused.value.code == 401

    async def run() -> None:
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=30) as http,
            Client(streamable_http_client(http_server, http_client=http)) as client,
        ):
            await exercise(client)

    asyncio.run(run())
