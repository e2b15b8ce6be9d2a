"""The team's own embedding server goes away under a running controller: nothing is lost, search still answers.

`kubevec run` against the real control plane, embedding through an OpenAI-compatible stand-in
(tests/doubles/model_servers.py) that is stopped and later started again on the same port.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.controlplane.cluster import ControlPlane, free_port
from tests.doubles.model_servers import KEY, StandIn, in_a_thread
from tests.e2e.agents import Agent
from tests.e2e.controller_harness import Controller, eventually

pytestmark = pytest.mark.e2e
NAMESPACE = "faults"
TOKEN = "mcp-token-embedder-down-0123456789"


@pytest.fixture
def controller(plane: ControlPlane, tmp_path: Path) -> Iterator[Controller]:
    plane.kubectl("create", "namespace", NAMESPACE)
    ctl = Controller(plane, tmp_path / "store", tmp_path / "kubevec.log")
    try:
        yield ctl
    finally:
        ctl.stop()
        plane.kubectl("delete", "namespace", NAMESPACE, "--wait=false")


def readyz_body(controller: Controller) -> str:
    return controller.readyz()[1]


def test_the_embedding_server_goes_away_and_comes_back(plane: ControlPlane, controller: Controller) -> None:
    port, mcp = free_port(), free_port()
    standin = StandIn(dialect="openai")
    controller.env.update(
        {
            "KUBEVEC_EMBEDDER__PROVIDER": "openai",
            "KUBEVEC_EMBEDDER__MODEL": "bge-small-en-v1.5",
            "KUBEVEC_EMBEDDER__BASE_URL": f"http://127.0.0.1:{port}/v1",
            "KUBEVEC_EMBEDDER__API_KEY": KEY,
            "KUBEVEC_EMBEDDER__DIMENSION": str(standin.dimension),
            "KUBEVEC_EMBEDDER__MAX_ATTEMPTS": "2",
            "KUBEVEC_EMBEDDER__TIMEOUT_SECONDS": "3",
            "KUBEVEC_MCP_PORT": str(mcp),
            "KUBEVEC_MCP_TOKEN": TOKEN,
        }
    )
    plane.kubectl("create", "configmap", "before-outage", "-n", NAMESPACE, "--from-literal=a=1")
    with in_a_thread(standin, port=port):
        controller.start()
        controller.wait_ready()
        controller.converged()
    # The server is gone. Changes keep coming; the controller stays up, not ready, and says why.
    plane.kubectl("create", "configmap", "payments-settings", "-n", NAMESPACE, "--from-literal=a=1")
    plane.kubectl("label", "configmap", "before-outage", "-n", NAMESPACE, "tier=gold")
    eventually(lambda: controller.readyz()[0] == 503, timeout=60, message="readiness never noticed the outage")
    # /readyz needs no token: it names the provider and the reason, never a server's words (they can echo the key)
    assert "embedder failing provider=openai reason=unavailable" in readyz_body(controller)
    assert KEY not in readyz_body(controller)
    failures = 'kubevec_embedder_errors_total{provider="openai",reason="unavailable"}'
    eventually(lambda: (controller.metric(failures) or 0) >= 1, timeout=30, message="no failure counted")
    assert controller.proc is not None
    assert controller.proc.poll() is None
    # An agent still gets an answer: from the question's words, marked degraded.
    agent = Agent(f"http://127.0.0.1:{mcp}/mcp", TOKEN)
    found = agent.call("vector_search", collection="instances", query="before outage configmap", k=3)
    assert "error" not in found, found
    assert found["degraded"].endswith("answered from keywords alone")
    assert any(hit["id"].endswith("/ConfigMap/before-outage") for hit in found["results"])
    assert (controller.metric('kubevec_search_degraded_total{tool="vector_search"}') or 0) >= 1
    # The server comes back where it was: what changed meanwhile is all there, nothing was dropped.
    with in_a_thread(standin, port=port):
        controller.wait_ready(timeout=120)
        controller.converged()

        # queries try the embedder again after a pause (EMBEDDER_DOWN_SECONDS), then answer whole
        eventually(
            lambda: (
                agent.call("vector_search", collection="instances", query="payments settings", k=3).get("degraded")
                is None
            ),
            timeout=60,
            message="answers stayed degraded",
        )
        # and what changed during the outage is there (the stand-in's vectors are hashes: look it up by id)
        prefix = f"faults/{NAMESPACE}/core/v1/ConfigMap"
        assert "error" not in agent.call("get_document", id=f"{prefix}/payments-settings")
        labelled = agent.call("get_document", id=f"{prefix}/before-outage")
        assert "tier=gold" in labelled["metadata"]["labels"]
    log = controller.log.read_text()
    assert KEY not in log
    assert "Recovered from a store or embedder failure" in log
    with urllib.request.urlopen(f"http://127.0.0.1:{controller.metrics}/metrics", timeout=5) as response:
        assert KEY not in response.read().decode()
