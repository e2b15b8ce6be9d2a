"""Two clusters, one store: two real control planes with different versions of one operator, two
`kubevec run` processes writing one Chroma server.

They share the capability records whose texts are equal, each keeps its own apiVersion, a resync of
either writes and embeds nothing, `kubevec clusters` lists both, and `kubevec forget-cluster` removes
one cluster's part without touching the other's vectors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubevec.backends.config import StoreSettings
from kubevec.backends.factory import open_store
from tests.controlplane.cluster import ControlPlane, free_port, running
from tests.e2e.agents import Agent
from tests.e2e.controller_harness import RESYNC, Controller, apply, eventually
from tests.e2e.convergence import wait_converged
from tests.fleet import GROUP, operator_crd
from tests.services import chroma_server

pytestmark = pytest.mark.e2e

TYPES = (0, 1, 10, 11)  # 0, 1: west's schema differs; 10, 11: the same schema, west also serves v2


@pytest.fixture(scope="module")
def west_plane() -> Iterator[ControlPlane]:
    with running(quiet=True, controllers=()) as plane:
        yield plane


def kubevec(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBEVEC_STORE__URL": url, "KUBEVEC_CLUSTER_NAME": "laptop"}
    command = [str(Path(sys.executable).with_name("kubevec")), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def capability_records(url: str) -> dict[str, dict[str, Any]]:
    import asyncio

    async def read() -> dict[str, dict[str, Any]]:
        store = open_store(StoreSettings(backend="chroma", url=url, path=None))
        try:
            return {r.id: dict(r.metadata) async for r in store.iter_records("capabilities") if GROUP in r.id}
        finally:
            await store.close()

    return asyncio.run(read())


def counters(controller: Controller) -> tuple[float | None, float | None]:
    return controller.metric("kubevec_upserts_total"), controller.metric("kubevec_embeddings_computed_total")


def after_next_resync(controller: Controller) -> None:
    started = time.time()
    eventually(
        lambda: (controller.metric("kubevec_last_full_resync_timestamp_seconds") or 0) > started,
        timeout=RESYNC * 2 + 30,
        message="no resync",
    )


def test_two_clusters_share_one_store_without_churn(
    plane: ControlPlane, west_plane: ControlPlane, tmp_path: Path
) -> None:
    apply(plane, [operator_crd(i, cluster="east") for i in TYPES])
    apply(west_plane, [operator_crd(i, cluster="west") for i in TYPES])
    (tmp_path / "chroma").mkdir()
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(
        "tokens:\n"
        f"  - {{name: west-team, token: {WEST_TOKEN}, namespaces: ['*'], clusters: [west]}}\n"
        f"  - {{name: ops, token: {OPS_TOKEN}, namespaces: ['*']}}\n"
    )
    mcp_port = free_port()
    with chroma_server(tmp_path / "chroma") as url:
        controllers = {
            name: Controller(
                where, tmp_path / "unused", tmp_path / f"{name}.log", KUBEVEC_CLUSTER_NAME=name, KUBEVEC_STORE__URL=url
            )
            for name, where in (("east", plane), ("west", west_plane))
        }
        controllers["east"].env.update({"KUBEVEC_MCP_PORT": str(mcp_port), "KUBEVEC_MCP_TOKENS_FILE": str(tokens)})
        try:
            for controller in controllers.values():
                controller.start()
            for name, controller in controllers.items():
                controller.wait_ready()
                drift, seconds = wait_converged(
                    kubeconfig=controller.plane.kubeconfig,
                    cluster=name,
                    timeout=RESYNC * 2,
                    open_store=lambda: open_store(StoreSettings(backend="chroma", url=url, path=None)),
                )
                assert drift.converged, f"{name} not converged after {seconds:.0f}s: {drift}"

            records = capability_records(url)
            clusters = sorted(tuple(m["cluster"]) for m in records.values())
            assert clusters == [("east",), ("east",), ("east", "west"), ("east", "west"), ("west",), ("west",)]

            # a resync of either cluster writes and embeds nothing
            before = {name: counters(c) for name, c in controllers.items()}
            for controller in controllers.values():
                after_next_resync(controller)
            assert {name: counters(c) for name, c in controllers.items()} == before
            assert capability_records(url) == records

            resolved = kubevec(url, "resolve", "Widget10", "--cluster", "west", "-o", "json")
            assert resolved.returncode == 0, resolved.stderr
            assert [(a["cluster"], a["apiVersion"]) for a in json.loads(resolved.stdout)] == [("west", f"{GROUP}/v2")]
            both = json.loads(kubevec(url, "resolve", "Widget10", "-o", "json").stdout)
            assert [(a["cluster"], a["apiVersion"]) for a in both] == [("east", f"{GROUP}/v1"), ("west", f"{GROUP}/v2")]

            # a token limited to west reads west's parts of the shared records, and nothing of east's
            check_cluster_scope(f"http://127.0.0.1:{mcp_port}/mcp")

            listed = kubevec(url, "clusters", "-o", "json")
            assert listed.returncode == 0, listed.stderr
            summary = {c["name"]: c for c in json.loads(listed.stdout)}
            assert set(summary) == {"east", "west"}
            assert all(summary[c]["last_resync"] and summary[c]["version"] for c in summary)
            assert summary["west"]["shared"] == 2

            # west is decommissioned: its controller stops, its documents go, east's stay as they are
            controllers["west"].stop()
            dry = kubevec(url, "forget-cluster", "west")
            assert dry.returncode == 1
            assert "capabilities_deleted=2 capabilities_shared_kept=2" in dry.stdout
            assert capability_records(url) == records
            gone = kubevec(url, "forget-cluster", "west", "--yes")
            assert gone.returncode == 0, gone.stderr
            left = capability_records(url)
            assert sorted(tuple(m["cluster"]) for m in left.values()) == [("east",)] * 4
            assert [c["name"] for c in json.loads(kubevec(url, "clusters", "-o", "json").stdout)] == ["east"]
            unknown = kubevec(url, "forget-cluster", "nowhere", "--yes")
            assert unknown.returncode == 1
            assert "holds no documents of cluster 'nowhere'" in unknown.stderr

            east_before = counters(controllers["east"])
            after_next_resync(controllers["east"])
            assert counters(controllers["east"]) == east_before  # its parts were never touched
        finally:
            for controller in controllers.values():
                controller.stop()


WEST_TOKEN = "west-team-token-0123456789"
OPS_TOKEN = "ops-token-0123456789abcdef"


def check_cluster_scope(mcp: str) -> None:
    """Through east's MCP endpoint (one store, both clusters): count_by, facets, resolve_kind and a search
    naming east showed east's parts to a token limited to west."""
    west, ops = Agent(mcp, WEST_TOKEN), Agent(mcp, OPS_TOKEN)
    counted = west.call("vector_search", collection="capabilities", group=GROUP, count_by="cluster")
    assert "error" not in counted, counted
    assert counted["counts"] == {"west": 4}
    assert ops.call("vector_search", collection="capabilities", group=GROUP, count_by="cluster")["counts"] == {
        "east": 4,
        "west": 4,
    }
    for field in ("cluster", "served_by", "parts"):
        facets = west.call("list_facets", collection="capabilities", field=field)
        assert "error" not in facets, facets
        assert not [value for value in json.dumps(facets).split('"') if value.startswith("east")], (field, facets)
    assert (
        "No resource type matches" in west.calls_one("resolve_kind", {"name": "Widget10", "cluster": "east"})["error"]
    )
    assert [(a["cluster"], a["apiVersion"]) for a in west.calls_one("resolve_kind", {"name": "Widget10"})["kinds"]] == [
        ("west", f"{GROUP}/v2")
    ]
    assert west.call("vector_search", collection="capabilities", query="widget", cluster="east")["results"] == []
    found = west.call("vector_search", collection="capabilities", query="widget", k=10)
    assert found["results"]
    assert all("east" not in json.dumps(hit["metadata"]) for hit in found["results"])
    # by meaning, over records both clusters share (a list apiVersion failed the tool's output schema)
    semantic = ops.calls_one("resolve_kind", {"name": "something that describes widgets"})
    assert "error" not in semantic, semantic
    assert semantic["kinds"]
    assert all(isinstance(a["apiVersion"], str) for a in semantic["kinds"])
    long = west.call("vector_search", collection="capabilities", query="widget", cluster="c" * 2000)
    assert "cluster" in long["error"]
    assert "Traceback" not in long["error"]
