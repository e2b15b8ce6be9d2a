"""``describer.llm.workloads``: an LLM says what each workload's software is, once per template, never re-asked.

`kubevec run` against the real control plane, its LLM an OpenAI-compatible chat stand-in
(tests/doubles/model_servers.py). Two copies of one Deployment (staging and prod) are one question; the
note reaches the stored text; nothing the gate drops is in a question; a restart asks nothing and
embeds nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubevec.inference.providers.llm import WORKLOAD_PROMPT
from tests.controlplane.cluster import ControlPlane, free_port
from tests.doubles.model_servers import KEY, StandIn, in_a_thread
from tests.e2e.controller_harness import Controller, apply, eventually, stored

pytestmark = pytest.mark.e2e
NAMESPACES = ("notes-staging", "notes-prod")
CANARY = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def deployment(name: str, namespace: str, image: str) -> dict[str, Any]:
    container = {
        "name": name,
        "image": image,
        "ports": [{"containerPort": 16686, "name": "http"}],
        "env": [{"name": "GITHUB_TOKEN", "value": CANARY}],
        "args": [f"--token={CANARY}"],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/name": name}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}},
        },
    }


def workload_questions(llm: StandIn) -> list[str]:
    return [r.texts[0] for r in llm.received if r.body["messages"][0]["content"] == WORKLOAD_PROMPT]


def notes_of(store: Path) -> dict[str, str]:
    out = {}
    for document_id, document in stored(store, "instances").items():
        if "/Deployment/" in document_id and "/notes-" in document_id:
            out[document_id] = next((p for p in document["text"].split(" | ") if p.startswith("does: ")), "")
    return out


def test_each_template_is_described_once_and_a_restart_asks_nothing(plane: ControlPlane, tmp_path: Path) -> None:
    for namespace in NAMESPACES:
        plane.kubectl("create", "namespace", namespace)
    port = free_port()
    llm = StandIn(dialect="openai-chat", answer="A zebrafish trace viewer")
    controller = Controller(plane, tmp_path / "store", tmp_path / "kubevec.log")
    controller.env.update(
        {
            "KUBEVEC_DESCRIBER__LLM__ENABLED": "true",
            "KUBEVEC_DESCRIBER__LLM__WORKLOADS": "true",
            "KUBEVEC_DESCRIBER__LLM__PROVIDER": "openai",
            "KUBEVEC_DESCRIBER__LLM__URL": f"http://127.0.0.1:{port}/v1",
            "KUBEVEC_DESCRIBER__LLM__MODEL": "stand-in",
            "KUBEVEC_DESCRIBER__LLM__API_KEY": KEY,
            "KUBEVEC_DESCRIBER__LLM__CACHE_DIR": str(tmp_path / "llm-cache"),
            "KUBEVEC_DESCRIBER__LLM__REQUESTS_PER_MINUTE": "600",
        }
    )
    apply(plane, [deployment("tracing", ns, "jaegertracing/jaeger-query:1.57") for ns in NAMESPACES])
    apply(plane, deployment("loadgen", NAMESPACES[0], "acme/locust-runner:2"))
    try:
        with in_a_thread(llm, port=port):
            controller.start()
            controller.wait_ready()
            eventually(
                lambda: (
                    sorted(notes_of(controller.store).values())
                    == [
                        "does: A zebrafish trace viewer (loadgen).",
                        "does: A zebrafish trace viewer (tracing).",
                        "does: A zebrafish trace viewer (tracing).",
                    ]
                ),
                timeout=60,
                message=f"the notes never reached the store: {notes_of(controller.store)}",
            )
            questions = workload_questions(llm)
            assert len(questions) == 2  # tracing in two namespaces: one template, one question
            assert all(CANARY not in q and "GITHUB_TOKEN" not in q and "--token" not in q for q in questions)
            assert any("image jaegertracing/jaeger-query:1.57, ports 16686/http" in q for q in questions)
            assert CANARY not in controller.log.read_text()
            controller.stop()

            controller.start()
            controller.wait_ready()
            assert controller.metric("kubevec_embeddings_computed_total") in (None, 0.0)
            assert len(workload_questions(llm)) == 2
            assert sorted(set(notes_of(controller.store).values())) == [
                "does: A zebrafish trace viewer (loadgen).",
                "does: A zebrafish trace viewer (tracing).",
            ]
    finally:
        controller.stop()
        for namespace in NAMESPACES:
            plane.kubectl("delete", "namespace", namespace, "--wait=false")
