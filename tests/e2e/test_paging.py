"""Paging a filter-only listing with `kubevec search --cursor` while the controller writes what the cluster changes.

Every ConfigMap that exists throughout is listed exactly once across the pages; totals are exact.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.controlplane.cluster import ControlPlane
from tests.doubles.embedders import CountingEmbedder
from tests.e2e.controller_harness import CLUSTER, eventually, running_controller, stored

pytestmark = pytest.mark.e2e
NS = "paging"
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def configmap_id(name: str) -> str:
    return f"{CLUSTER}/{NS}/core/v1/ConfigMap/{name}"


def search(store: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(store), "KUBEVEC_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [KUBEVEC, "search", "--collection", "instances", "--kind", "ConfigMap", "-n", NS, "--json", *args],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_pages_under_writes_list_every_unchanged_object_once(control_plane: ControlPlane, tmp_path: Path) -> None:
    control_plane.kubectl("create", "namespace", NS)
    names = [f"cm-{i:03d}" for i in range(40)]
    control_plane.kubectl(
        "apply", "-f", "-",
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": NS}, "data": {"a": "1"}}
            for n in names
        ]}),
    )  # fmt: skip
    store = tmp_path / "store"
    with running_controller(plane=control_plane, store_path=store, embedder=CountingEmbedder()):
        eventually(
            lambda: {configmap_id(n) for n in names} <= set(stored(store, "instances")),
            timeout=60,
            message="the ConfigMaps were never all stored",
        )
        first = search(store, "-k", "15")
        assert (first["total"], first["truncated"], len(first["results"])) == (40, True, 15)
        seen = [r["id"] for r in first["results"]]
        # The cluster changes between pages: one already listed and one not yet listed go, one arrives.
        control_plane.kubectl("delete", "configmap", "cm-000", "cm-039", "-n", NS)
        control_plane.kubectl("create", "configmap", "zz-late", "-n", NS, "--from-literal=a=1")
        eventually(
            lambda: (
                configmap_id("zz-late") in (ids := set(stored(store, "instances")))
                and configmap_id("cm-039") not in ids
            ),
            timeout=60,
            message="the controller never wrote the changes",
        )
        cursor, pages = first["cursor"], 1
        while cursor:
            page = search(store, "-k", "15", "--cursor", cursor)
            assert page["total"] == 39  # exact, now: 40 - 2 + 1
            seen += [r["id"] for r in page["results"]]
            cursor, pages = page["cursor"], pages + 1
        counted = search(store, "--count-by", "namespace")
    unchanged = {configmap_id(n) for n in names[1:-1]}
    assert unchanged <= set(seen)  # nothing that stayed was skipped
    assert len(seen) == len(set(seen))  # nothing was listed twice
    assert configmap_id("cm-039") not in seen
    assert configmap_id("zz-late") in seen  # it sorts after every cursor given
    assert pages == 3
    assert counted["results"] == []
    assert counted["counts"] == {NS: 39}
