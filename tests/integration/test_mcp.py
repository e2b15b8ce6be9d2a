"""`kubevec mcp` end to end with the official SDK client, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
import os
import queue
import subprocess
import sys
import threading
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
from mcp.server.mcpserver import Context

from kubevec.backends import Record
from kubevec.backends.chroma import ChromaStore
from kubevec.backends.filters import Eq
from kubevec.controller.sync.crd_files import index_crds
from kubevec.inference.instances import build_instance
from kubevec.inference.providers.embedders.local import LocalEmbedder
from kubevec.query.request import MAX_K, SearchRequest
from kubevec.query.tools import names as tool_names
from tests.conftest import SAMPLE_CRDS
from tests.controlplane.cluster import free_port

pytestmark = pytest.mark.integration
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


@pytest.fixture(scope="module")
def store_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("mcp-store") / "chroma"

    async def build() -> None:
        store = ChromaStore(path=str(path))
        await index_crds(
            paths=[SAMPLE_CRDS],
            store=store,
            embedder=LocalEmbedder(),
            collection="capabilities",
            cluster="mcp",
            progress=None,
        )
        embedder = LocalEmbedder()
        await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
        docs = [build_instance(obj, plural=plural, cluster="mcp").to_document() for plural, obj in INSTANCES]
        vectors = await embedder.embed_documents([d.text for d in docs])
        await store.upsert(
            "instances",
            [Record(id=d.id, vector=v, text=d.text, metadata=d.metadata) for d, v in zip(docs, vectors, strict=True)],
        )
        await store.close()

    asyncio.run(build())
    return {**os.environ, "KUBEVEC_STORE__PATH": str(path), "KUBEVEC_LOG_LEVEL": "WARNING"}


INSTANCES: list[tuple[str, dict[str, Any]]] = [
    (
        "deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "payments", "namespace": "prod"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"app": "payments"}},
                    "spec": {"containers": [{"name": "api", "envFrom": [{"secretRef": {"name": "payments-db"}}]}]},
                }
            },
        },
    ),
    (
        "services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "payments", "namespace": "prod"},
            "spec": {"selector": {"app": "payments"}},
        },
    ),
]


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def exercise(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(tool_names())  # the one list the server, the metrics and the traces read
    schema = (
        tools["vector_search"].input_schema
        if hasattr(tools["vector_search"], "input_schema")
        else tools["vector_search"].inputSchema
    )
    assert set(schema["properties"]) == {*SearchRequest.model_fields, "format"}
    assert "cluster" in schema["properties"]
    for name in ("get_document", "resolve_kind", "related", "list_facets"):  # every tool can be scoped to one cluster
        other = tools[name].input_schema if hasattr(tools[name], "input_schema") else tools[name].inputSchema
        assert "cluster" in other["properties"], name
    for tool in tools.values():  # read-only, idempotent, closed world: clients may auto-approve them
        hints = tool.annotations
        assert hints is not None
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
            True,
            False,
            True,
            False,
        )
    assert schema["properties"]["k"]["maximum"] == MAX_K
    found = await client.call_tool(
        "vector_search",
        {"query": "TLS certificate stored in a secret, renewed automatically", "k": 3, "format": "json"},
    )
    answer = json.loads(text_of(found))
    results = answer["results"]
    assert answer["total"] >= 3  # the candidates ranked
    assert results[0]["metadata"]["resource"] == "certificates.pki.samples.kubevec.io"
    assert 0 <= results[0]["score"] <= 1
    document = json.loads(
        text_of(
            await client.call_tool(
                "get_document", {"collection": "capabilities", "id": "connectionpoolers.databases.samples.kubevec.io"}
            )
        )
    )
    assert document["metadata"]["kind"] == "ConnectionPooler"
    facets = await client.call_tool("list_facets", {"collection": "capabilities", "field": "group"})
    assert "databases.samples.kubevec.io" in text_of(facets)
    bad = await client.call_tool("vector_search", {"collection": "capabilities"})
    assert bad.is_error if hasattr(bad, "is_error") else bad.isError
    assert "Give a query, a keyword or a filter" in text_of(bad)
    too_many = await client.call_tool("vector_search", {"query": "x", "k": MAX_K + 1})
    assert f"less than or equal to {MAX_K}" in text_of(too_many)
    missing = await client.call_tool("get_document", {"collection": "capabilities", "id": "nope"})
    assert "No document" in text_of(missing)
    # The collection is optional: a capability id is found without it (this store has no instances).
    inferred = json.loads(
        text_of(await client.call_tool("get_document", {"id": "topics.messaging.samples.kubevec.io"}))
    )
    assert (inferred["collection"], inferred["metadata"]["kind"]) == ("capabilities", "Topic")
    nowhere = await client.call_tool("get_document", {"id": "mcp/a/core/v1/ConfigMap/x"})
    assert "No document 'mcp/a/core/v1/ConfigMap/x' in capabilities or instances" in text_of(nowhere)
    resolved = json.loads(text_of(await client.call_tool("resolve_kind", {"name": "pgc"})))
    assert [(r["kind"], r["apiVersion"], r["match"]) for r in resolved] == [
        ("PostgresCluster", "databases.samples.kubevec.io/v1", "exact")
    ]
    by_kind = json.loads(text_of(await client.call_tool("list_facets", {"collection": "capabilities"})))
    assert by_kind["PostgresCluster"] == 1  # field defaults to kind
    # What breaks if the Secret goes: from the payloads, the Secret itself need not be stored.
    related = await client.call_tool("related", {"id": "Secret/prod/payments-db", "direction": "in", "hops": 2})
    assert text_of(related).splitlines() == [
        "Secret prod/payments-db (not stored)",
        "  <- uses-secret        Deployment prod/payments",
        "    <- selects            Service prod/payments",
    ]
    structured = related.structured_content if hasattr(related, "structured_content") else related.structuredContent
    assert structured is not None
    assert [(e["relation"], e["from"]["id"]) for e in structured["edges"]] == [
        ("uses-secret", "mcp/prod/apps/v1/Deployment/payments"),
        ("selects", "mcp/prod/core/v1/Service/payments"),
    ]
    too_far = await client.call_tool("related", {"id": "Secret/prod/payments-db", "hops": 4})
    assert "hops: Input should be less than or equal to 3" in text_of(too_far)


def test_stdio_transport(store_env: dict[str, str]) -> None:
    async def run() -> None:
        async with Client(StdioServerParameters(command=KUBEVEC, args=["mcp"], env=store_env)) as client:
            await exercise(client)

    asyncio.run(run())


@pytest.fixture
def http_server(store_env: dict[str, str]) -> Iterator[str]:
    with serving_http({**store_env, "KUBEVEC_MCP_TOKEN": "s3cret"}) as (url, _):
        yield url


@contextlib.contextmanager
def serving_http(env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`kubevec mcp --transport http` on a free port with ``env``: its URL and process (stderr piped)."""
    port = free_port()
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
        yield url, proc
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


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_a_stateless_client_and_a_session_client_are_both_served(http_server: str, mode: str) -> None:
    """issue 53: the MCP specification of 2026-07-28 is stateless (no initialize, no Mcp-Session-Id); clients
    of the older, session-based one keep working. Both pass the same tool calls; the stateless one never
    opens a session."""
    seen_sessions: list[str] = []

    async def record(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            seen_sessions.append(response.headers["mcp-session-id"])

    async def run() -> str:
        async with (
            httpx2.AsyncClient(
                headers={"Authorization": "Bearer s3cret"}, timeout=30, event_hooks={"response": [record]}
            ) as http,
            Client(streamable_http_client(http_server, http_client=http), mode=mode) as client,
        ):
            await exercise(client)
            return client.protocol_version

    version = asyncio.run(run())
    if mode == "legacy":
        assert version == "2025-11-25" or version.startswith("2025")
        assert seen_sessions  # the handshake era's session
    else:
        assert version == "2026-07-28"
        assert seen_sessions == []  # stateless: no session anywhere


def _rpc(method: str, id: int | None = None, **params: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        message["id"] = id
    return (json.dumps(message) + "\n").encode()


def test_stdio_answers_every_request_even_a_hostile_one(store_env: dict[str, str]) -> None:
    """A filter nested 1,000 deep gets a JSON-RPC error with its id; the next request is answered too."""
    proc = subprocess.Popen(
        [KUBEVEC, "mcp"], env=store_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    answers: queue.Queue[dict[str, Any]] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            answers.put(json.loads(line))

    threading.Thread(target=read, daemon=True).start()
    assert proc.stdin is not None
    try:
        proc.stdin.write(
            _rpc(
                "initialize",
                1,
                protocolVersion="2025-06-18",
                capabilities={},
                clientInfo={"name": "test", "version": "0"},
            )
        )
        proc.stdin.flush()
        initialized = answers.get(timeout=60)
        assert initialized["id"] == 1
        server = initialized["result"]["serverInfo"]
        assert (server["name"], server["version"]) == ("kubevec", importlib.metadata.version("kubevec"))
        proc.stdin.write(_rpc("notifications/initialized"))
        deep = '{"$and": [' * 1000 + '{"kind": "x"}' + "]}" * 1000  # json.dumps itself cannot nest this deep
        proc.stdin.write(
            b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "vector_search", '
            b'"arguments": {"keyword": "tls", "filter": ' + deep.encode() + b"}}}\n"
        )
        proc.stdin.write(
            _rpc("tools/call", 8, name="list_facets", arguments={"collection": "capabilities", "field": "group"})
        )
        proc.stdin.flush()
        got = {}
        while len(got) < 2:
            answer = answers.get(timeout=30)  # a request without an answer would hang here
            got[answer["id"]] = answer
        assert got[7]["error"]["code"] == -32600
        assert "nested deeper" in got[7]["error"]["message"]
        assert "pki.samples.kubevec.io" in json.dumps(got[8]["result"])
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.stderr is not None
    with proc.stderr, proc.stdout:  # type: ignore[union-attr]
        assert "Traceback" not in proc.stderr.read().decode()


def test_http_refuses_a_public_bind_without_a_token(store_env: dict[str, str]) -> None:
    refused = subprocess.run(
        [KUBEVEC, "mcp", "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port())],
        env=store_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 1
    assert "refusing to serve MCP on 0.0.0.0 without authentication" in refused.stderr
    assert refused.stderr.strip().count("\n") == 0


def test_http_checks_host_and_origin_and_serves_an_open_healthz(http_server: str) -> None:
    base = http_server.removesuffix("/mcp")
    with urllib.request.urlopen(f"{base}/healthz", timeout=5) as health:  # no token needed for probes
        assert health.status == 200
    for headers in ({"Host": "evil.example.com"}, {"Origin": "http://evil.example.com"}):
        request = urllib.request.Request(
            http_server,
            data=_rpc("tools/list", 1),
            method="POST",
            headers={
                "Authorization": "Bearer s3cret",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )
        with pytest.raises(urllib.error.HTTPError) as rejected:
            urllib.request.urlopen(request, timeout=5)
        assert rejected.value.code in (400, 403, 421), headers


def _open_session(url: str, token: str) -> tuple[int, str | None]:
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    answer = httpx2.post(url, json=body, headers={**_ACCEPT, "Authorization": f"Bearer {token}"}, timeout=10)
    session = answer.headers.get("mcp-session-id")
    if session:
        httpx2.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={**_ACCEPT, "Authorization": f"Bearer {token}", "mcp-session-id": session},
            timeout=10,
        )
    return answer.status_code, session


_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_http_sessions_are_owned_bounded_and_expire_and_ids_in_flight_are_not_reused(
    store_env: dict[str, str], tmp_path: Path
) -> None:
    """Before: a request reusing an id in flight hung both; sessions lived 30 minutes, 10,000 of them;
    anyone with a valid token could use another caller's session id; a 1 MB id was one 1 MB log line."""
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(
        "tokens:\n"
        "  - {name: alice, token: alice-token-0123456789, namespaces: ['*']}\n"
        "  - {name: bob, token: bob-token-0123456789ab, namespaces: [shop]}\n"
        "  - {name: carol, token: carol-token-0123456789, namespaces: [shop]}\n"
    )
    env = {
        **store_env,
        "KUBEVEC_MCP_TOKENS_FILE": str(tokens),
        "KUBEVEC_MCP_MAX_SESSIONS": "4",
        "KUBEVEC_MCP_CALLER_SESSIONS": "2",
        "KUBEVEC_MCP_SESSION_IDLE_SECONDS": "2",
    }
    with serving_http(env) as (url, proc):
        status, session = _open_session(url, "alice-token-0123456789")
        assert status == 200
        assert session
        alice = {**_ACCEPT, "Authorization": "Bearer alice-token-0123456789", "mcp-session-id": session}
        bob_with_alices_session = {**alice, "Authorization": "Bearer bob-token-0123456789ab"}
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        assert httpx2.post(url, json=listing, headers=bob_with_alices_session, timeout=10).status_code == 404
        assert httpx2.post(url, json=listing, headers=alice, timeout=10).status_code == 200

        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "vector_search", "arguments": {"query": "postgres database", "k": 2}}}  # fmt: skip

        async def twice() -> list[int]:
            async with httpx2.AsyncClient(timeout=20) as http:
                answers = await asyncio.gather(*(http.post(url, json=call, headers=alice) for _ in range(2)))
            return sorted(a.status_code for a in answers)

        assert asyncio.run(twice()) == [200, 409]  # one answered, the other refused at once (both hung before)
        huge = {**call, "id": "x" * 1_000_000}
        assert httpx2.post(url, json=huge, headers=alice, timeout=20).status_code == 200

        # bob at his own cap (2) is refused with 429; alice still connects (before: one caller filled the
        # global cap and every other got 503); then the server is full (4) and carol gets 503
        assert [_open_session(url, "bob-token-0123456789ab")[0] for _ in range(3)] == [200, 200, 429]
        assert _open_session(url, "alice-token-0123456789")[0] == 200
        assert _open_session(url, "carol-token-0123456789")[0] == 503
        refused = httpx2.post(url, json={}, headers={**_ACCEPT, "Authorization": "Bearer bob-token-0123456789ab"})
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 2
        metrics = httpx2.get(url.replace("/mcp", "/metrics"), timeout=10).text
        assert 'kubevec_mcp_refused_total{reason="caller_sessions"} 2' in metrics
        assert 'kubevec_mcp_refused_total{reason="sessions"} 1' in metrics
        time.sleep(3)  # every session idle for longer than 2 s: all gone
        assert httpx2.post(url, json=listing, headers=alice, timeout=10).status_code == 404
        assert _open_session(url, "bob-token-0123456789ab")[0] == 200
    assert proc.stderr is not None
    log = proc.stderr.read().decode()
    assert max(len(line) for line in log.splitlines()) < 2_200
    assert "alice-token" not in log


async def test_a_new_tool_with_no_view_code_sees_only_its_callers_documents() -> None:
    """issue 31: the view was applied by hand in each tool; a tool that forgot it showed everything.
    Tools are given ``server.reader(ctx)``, scoped to the caller, and never the service."""
    from kubevec.query.access import Authorizer, StaticToken
    from kubevec.query.mcp import EmbeddedHttpServer, HttpGuard, build_server, transport_security
    from tests.unit.tenants import CLUSTER, index

    service, _ = await index()
    server = build_server(service.scoped, require_view=True)

    @server.tool(description="Every instance id (a tool written with no view code at all).")
    async def every_instance(ctx: Context) -> list[str]:
        request = SearchRequest.build(collection="instances", k=100, filter={"cluster": CLUSTER})
        return sorted(r.id for r in await server.reader(ctx).search(request))

    team = StaticToken(name="team-a", token="team-a-token-0123456789", namespaces=("team-a",))
    everyone = StaticToken(name="ops", token="ops-token-0123456789ab", namespaces=("*",))
    security = transport_security(host="127.0.0.1", allowed_hosts=(), allowed_origins=())
    app = HttpGuard(
        server.streamable_http_app(host="127.0.0.1", transport_security=security),
        authorizer=Authorizer(cluster=CLUSTER, static=[team, everyone]),
    )
    embedded = EmbeddedHttpServer(app, host="127.0.0.1", port=0)
    await embedded.start()
    try:

        async def ids(token: str) -> list[str]:
            headers = {"Authorization": f"Bearer {token}"}
            url = f"http://127.0.0.1:{embedded.port}/mcp"
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                result = await client.call_tool("every_instance", {})
                assert not result.is_error, result
                assert result.structured_content is not None
                return list(result.structured_content["result"])

        mine, all_of_them = await ids("team-a-token-0123456789"), await ids("ops-token-0123456789ab")
    finally:
        await embedded.stop()
    assert mine
    assert {i.split("/")[1] for i in mine} == {"team-a"}
    assert set(mine) < set(all_of_them)
    assert {i.split("/")[1] for i in all_of_them} >= {"team-a", "team-b", "_cluster"}


async def test_list_changes_answers_each_caller_with_its_view() -> None:
    """The change history is read under the caller's view of instances: a team sees its namespace's changes."""
    from kubevec.inference.change_records import CHANGE_FIELDS, CHANGES, Stored, change_record
    from kubevec.query.access import Authorizer, StaticToken
    from kubevec.query.mcp import EmbeddedHttpServer, HttpGuard, build_server, transport_security
    from tests.unit.tenants import CLUSTER, index

    service, store = await index()
    assert service.embedder is not None
    await store.ensure_collection(
        CHANGES, dimension=service.embedder.dimension, embedder=service.embedder.name, indexed=CHANGE_FIELDS
    )
    records = []
    async for record in store.iter_records("instances", filter=Eq("cluster", CLUSTER)):
        before = Stored(text=record.text, metadata={**record.metadata, "health": "healthy"})
        after = Stored(text=record.text, metadata={**record.metadata, "health": "degraded"})
        change = change_record(object_id=record.id, before=before, after=after)
        assert change is not None
        records.append(
            Record(
                id=change.id, vector=service.embedder.vector(change.text), text=change.text, metadata=change.metadata
            )
        )
    await store.upsert(CHANGES, records)
    service.collections[CHANGES] = CHANGES
    server = build_server(service.scoped, require_view=True)
    team = StaticToken(name="team-a", token="team-a-token-0123456789", namespaces=("team-a",))
    types_only = StaticToken(
        name="types", token="types-token-0123456789", namespaces=("*",), collections=("capabilities",)
    )
    security = transport_security(host="127.0.0.1", allowed_hosts=(), allowed_origins=())
    app = HttpGuard(
        server.streamable_http_app(host="127.0.0.1", transport_security=security),
        authorizer=Authorizer(cluster=CLUSTER, static=[team, types_only]),
    )
    embedded = EmbeddedHttpServer(app, host="127.0.0.1", port=0)
    await embedded.start()
    try:

        async def listed(token: str, **arguments: Any) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {token}"}
            url = f"http://127.0.0.1:{embedded.port}/mcp"
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                result = await client.call_tool("list_changes", {"since": "1h", "format": "json", **arguments})
                assert not result.is_error, result
                assert result.structured_content is not None
                return dict(result.structured_content)

        mine = await listed("team-a-token-0123456789", k=100)
        by_meaning = await listed("team-a-token-0123456789", query="degraded", k=2)
        blind = await listed("types-token-0123456789")
    finally:
        await embedded.stop()
    assert mine["total"] == len(mine["changes"]) > 0
    assert {c["namespace"] for c in mine["changes"]} == {"team-a"}
    assert all(" -> degraded" in c["summary"] for c in mine["changes"])
    assert len(by_meaning["changes"]) == 2
    assert {c["namespace"] for c in by_meaning["changes"]} == {"team-a"}
    assert blind["total"] == 0
