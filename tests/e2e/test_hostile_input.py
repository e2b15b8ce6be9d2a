"""Hostile input on a real API server: each yields a correct document or a counted, once-logged skip.

The controller (`kubevec run`) stays ready throughout, and the store converges exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.controlplane.cluster import ControlPlane
from tests.e2e.controller_harness import RESYNC, Controller, apply, eventually, namespaced_crd, stored

pytestmark = pytest.mark.e2e

NS = "hostile"
GROUP = "hostile.kubevec.test"
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def create(plane: ControlPlane, obj: dict[str, Any] | list[dict[str, Any]]) -> None:
    """``kubectl create`` (apply would add a last-applied copy and push big objects past 256 KB)."""
    items = obj if isinstance(obj, list) else [obj]
    plane.kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def crd(plural: str, kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    return namespaced_crd(group=GROUP, plural=plural, kind=kind, schema=schema)


def huge_schema(*, target_bytes: int) -> dict[str, Any]:
    """An object schema of about ``target_bytes`` of JSON: thousands of described fields."""
    description = "A setting that tunes one part of the giant widget. " * 8
    fields = {
        f"setting{i:05d}": {"type": "string", "description": f"{description} (number {i})"}
        for i in range(target_bytes // (len(description) + 60))
    }
    return {
        "type": "object",
        "description": "A giant widget with very many settings.",
        "properties": {"spec": {"type": "object", "properties": fields}},
    }


def deep_schema(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string", "description": "The innermost value."}
    for level in range(levels):
        node = {"type": "object", "description": f"Level {level}.", "properties": {f"l{level}": node}}
    return {"type": "object", "description": "A deeply nested thing.", "properties": {"spec": node}}


def test_hostile_input_is_indexed_or_skipped_once_and_the_controller_stays_ready(
    plane: ControlPlane, tmp_path: Path
) -> None:
    plane.kubectl("create", "namespace", NS)
    big = crd("giants", "Giant", huge_schema(target_bytes=1_400_000))
    assert len(json.dumps(big)) > 1_300_000
    create(plane, big)
    create(
        plane,
        [
            crd("deeps", "Deep", deep_schema(60)),
            crd(
                "bares",
                "Bare",
                {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                },
            ),
            crd("blobs", "Blob", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
            crd("doomeds", "Doomed", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
        ],
    )
    for plural in ("giants", "deeps", "bares", "blobs", "doomeds"):
        plane.kubectl("wait", "--for=condition=Established", f"crd/{plural}.{GROUP}", "--timeout=120s")
    # An aggregated API whose backend does not exist: discovery of its group fails on every resync.
    apply(
        plane,
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1alpha1.broken.kubevec.test"},
            "spec": {
                "group": "broken.kubevec.test",
                "version": "v1alpha1",
                "service": {"name": "nowhere", "namespace": NS, "port": 443},
                "insecureSkipTLSVerify": True,
                "groupPriorityMinimum": 1000,
                "versionPriority": 15,
            },
        },
    )
    deep_spec: Any = "innermost"
    for level in range(60):
        deep_spec = {f"l{level}": deep_spec}
    weird = "nul\x00 zero\u200bwidth rtl\u202eexe.jpg bom\ufeff"
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Giant",
            "metadata": {"name": "g", "namespace": NS},
            "spec": {"setting00001": "on"},
        },
        {"apiVersion": f"{GROUP}/v1", "kind": "Deep", "metadata": {"name": "d", "namespace": NS}, "spec": deep_spec},
        {"apiVersion": f"{GROUP}/v1", "kind": "Bare", "metadata": {"name": "b", "namespace": NS}, "spec": {"size": 3}},
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Blob",
            "metadata": {"name": "weird", "namespace": NS, "annotations": {"example.com/description": weird}},
            "spec": {"title": weird, "anything": {"goes": [1, {"here": True}]}},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "labelled",
                "namespace": NS,
                "labels": {f"l{i}": f"v{i}" for i in range(200)},
                "annotations": {"example.com/description": "x" * 250_000},
            },
            "data": {"k": "v"},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "big", "namespace": NS},
            "data": {"big": "y" * 1_000_000},
        },
        # A 10 KB string of nested brackets raised RecursionError out of the redactor on every resync,
        # and strings like these took seconds each (the redactor's time grew with their square).
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Blob",
            "metadata": {"name": "brackets", "namespace": NS},
            "spec": {"payload": "[" * 5000 + "]" * 5000, "size": "small"},
        },
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Blob",
            "metadata": {"name": "slow", "namespace": NS},
            "spec": {"dashes": "a-" * 8000, "dots": "a." * 8000, "shell": "mysql " * 3000, "size": "medium"},
        },
        # Past the node bound: skipped, counted and named, never a stalled resync.
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Blob",
            "metadata": {"name": "swarm", "namespace": NS},
            "spec": {f"k{i}": list(range(60)) for i in range(4300)},
        },
    ]
    for obj in objects:
        create(plane, obj)
    create(
        plane,
        [
            {
                "apiVersion": f"{GROUP}/v1",
                "kind": "Doomed",
                "metadata": {"name": f"x{i}", "namespace": NS},
                "spec": {"n": i},
            }
            for i in range(40)
        ],
    )

    controller = Controller(plane, tmp_path / "store", tmp_path / "kubevec.log")
    try:
        controller.start()
        time.sleep(2)  # the CRD goes while its instances are being synced
        plane.kubectl("delete", "crd", f"doomeds.{GROUP}", "--wait=false")
        controller.wait_ready(timeout=240)
        controller.converged(timeout=RESYNC * 2)
        # kopf's own discovery skips the broken group (it used to end the operator once its
        # retries ran out, about 48 s after start: a crash loop over a group nobody needs)
        eventually(
            lambda: "Not watching an unavailable API group group=broken.kubevec.test" in controller.log.read_text(),
            timeout=120,
            message="kopf's discovery never skipped the unavailable API group",
        )
        time.sleep(RESYNC * 1.5)  # at least one more resync with the broken aggregated API
        assert controller.proc is not None
        assert controller.proc.poll() is None
        assert controller.readyz()[0] == 200
        assert (controller.metric('kubevec_errors_total{stage="discovery"}') or 0) >= 1
        assert (controller.metric('kubevec_documents_skipped_total{reason="nodes"}') or 0) >= 1
        assert (controller.metric('kubevec_documents_skipped_total{reason="error"}') or 0) == 0
        controller.converged()
        status_env = {**os.environ, "KUBEVEC_STORE__PATH": str(controller.store), "KUBEVEC_LOG_LEVEL": "WARNING"}
        eventually(
            lambda: (
                f"blobs/{NS}/swarm (nodes)"
                in subprocess.run(
                    [KUBEVEC, "status"], env=status_env, capture_output=True, text=True, timeout=120, check=False
                ).stdout
            ),
            timeout=RESYNC * 2,
            message="kubevec status never named the skipped object",
        )
        capabilities = stored(controller.store, "capabilities")
        instances = stored(controller.store, "instances")
    finally:
        controller.stop()

    for plural in ("giants", "deeps", "bares", "blobs"):
        assert f"{plural}.{GROUP}" in capabilities, plural
    assert len(capabilities[f"giants.{GROUP}"]["text"]) < 20_000  # the text stays a document, not a dump
    assert "Bare" in capabilities[f"bares.{GROUP}"]["text"]
    assert f"doomeds.{GROUP}" not in capabilities
    assert not [i for i in instances if "/Doomed/" in i]
    labelled = instances[f"faults/{NS}/core/v1/ConfigMap/labelled"]
    assert len(labelled["metadata"]["labels"]) == 200
    assert len(labelled["text"]) < 5_000
    assert "keys: big" in instances[f"faults/{NS}/core/v1/ConfigMap/big"]["text"]
    blob = instances[f"faults/{NS}/{GROUP}/v1/Blob/weird"]
    for char in ("\x00", "\u200b", "\u202e", "\ufeff"):
        assert char not in json.dumps(blob, ensure_ascii=False)
    assert f"faults/{NS}/{GROUP}/v1/Deep/d" in instances
    assert "size: small" in instances[f"faults/{NS}/{GROUP}/v1/Blob/brackets"]["text"]
    assert "size: medium" in instances[f"faults/{NS}/{GROUP}/v1/Blob/slow"]["text"]
    assert f"faults/{NS}/{GROUP}/v1/Blob/swarm" not in instances

    log = controller.log.read_text()
    assert "Traceback" not in log
    skipped = [line for line in log.splitlines() if "Skipped an object that cannot be indexed" in line]
    assert len([line for line in skipped if f"blobs/{NS}/swarm" in line]) == 1, skipped  # once, not per resync
    assert "reason=nodes" in next(line for line in skipped if "swarm" in line)
    broken = [
        line
        for line in log.splitlines()
        if "broken.kubevec.test" in line and (" WARNING " in line or " ERROR " in line)
    ]
    ours = [line for line in broken if " kubevec.controller.kube.client " in line]
    assert 1 <= len(ours) <= 2, broken  # once per log interval (60 s), not once per resync (20 s)
    # kopf's discovery, once at start: its two attempts and the skip (not one line per retry forever)
    assert len(broken) - len(ours) <= 3, broken

    env = {**os.environ, "KUBEVEC_STORE__PATH": str(controller.store), "KUBEVEC_LOG_LEVEL": "WARNING"}
    found = subprocess.run(
        [KUBEVEC, "search", "--collection", "instances", "--label", "l150=v150", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == [f"faults/{NS}/core/v1/ConfigMap/labelled"]
