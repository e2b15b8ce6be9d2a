"""Instance answers on applications and questions nobody here tuned on (``tests/bench/apps-heldout``).

A helper session that never read kubevec's code or its bench wrote the questions from the manifests of
three public applications (Docker's voting app, DeathStarBench's hotel reservation, Buoyant's books
app), and the folder was frozen by its sha256 (``FROZEN.sha256``) before the first run; this refuses a
changed file. (An earlier held-out set, Bookinfo and Bank of Anthos, is gone: those two are among the
applications the project's own yardstick measures on, so they may not sit in this repository.) The same yardstick as
``tests.bench.answers`` (one ``kubevec search``-like call per question, k=10): hit@1, hit@5, MRR, facts.

A second set, ``tests/bench/apps-heldout2``, was written the same way later (three other applications):
``python -m tests.bench.held_out apps-heldout2``. Sets rotate: once a set's first-sight score is reported
and its misses are read to find what fails, it becomes a set to tune on, and the newer one is measured.

``python -m tests.bench.held_out [folder]`` (``KUBEVEC_BENCH_ANSWERS_SHOW=1`` prints each question's top 5).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.answers import CLUSTER, CONTROLLERS, ask_all, missed, scores
from tests.bench.report import table
from tests.controlplane.cluster import ControlPlane, running
from tests.e2e.controller_harness import Controller
from tests.e2e.convergence import wait_converged

HERE = Path(__file__).resolve().parent
BLIND = HERE / "apps-heldout"
ROOT = Path(__file__).resolve().parents[2]


def check_frozen(blind: Path = BLIND) -> None:
    for line in (blind / "FROZEN.sha256").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        if hashlib.sha256((ROOT / name).read_bytes()).hexdigest() != digest:
            raise SystemExit(f"{name} changed since it was frozen")


def populate(plane: ControlPlane, blind: Path = BLIND) -> None:
    if (blind / "crds.yaml").is_file():
        plane.kubectl("apply", "-f", str(blind / "crds.yaml"))
        plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
    namespaces: dict[str, str] = json.loads((blind / "namespaces.json").read_text())
    for folder, namespace in namespaces.items():
        plane.kubectl("create", "namespace", namespace)
        plane.kubectl("apply", "-n", namespace, "-f", str(blind / folder))


def run(blind: Path = BLIND) -> str:
    check_frozen(blind)
    asked = [json.loads(line) for line in (blind / "questions.jsonl").read_text().splitlines() if line.strip()]
    show = os.environ.get("KUBEVEC_BENCH_ANSWERS_SHOW") == "1"
    with (
        tempfile.TemporaryDirectory(prefix="kubevec-held-out-") as tmp,
        running(quiet=True, controllers=(*CONTROLLERS, "statefulset")) as plane,
    ):
        populate(plane, blind)
        store = Path(tmp) / "store"
        controller = Controller(plane, store, Path(tmp) / "controller.log", KUBEVEC_CLUSTER_NAME=CLUSTER)
        started = time.monotonic()
        controller.start()
        try:
            controller.wait_ready(timeout=600)
            wait_converged(kubeconfig=plane.kubeconfig, cluster=CLUSTER, store_path=store, timeout=300)
        finally:
            controller.stop()
        synced = time.monotonic() - started
        result: dict[str, Any] = asyncio.run(ask_all(store, show=show, asked=asked))
    rows = result["rows"]
    count = len(rows)
    hit1, hit5, mrr, facts = scores(rows)
    quality = table(
        ["held-out questions", "hit@1", "hit@5", "MRR@10", "fact recall", "sync s"],
        [[str(count), f"{hit1:.2f}", f"{hit5:.2f}", f"{mrr:.2f}", f"{facts:.2f}", f"{synced:.0f}"]],
    )
    return f"{quality}\nnot in the top 5: {', '.join(missed(rows)) or '-'}"


if __name__ == "__main__":
    print(run(HERE / sys.argv[1] if len(sys.argv) > 1 else BLIND))
