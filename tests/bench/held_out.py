"""Instance answers on applications and questions nobody here tuned on (``tests/bench/apps-heldout``).

A helper session that never read kubevec's code or its bench wrote the questions from the manifests of
three public applications (Docker's voting app, DeathStarBench's hotel reservation, Buoyant's books
app), and the folder was frozen by its sha256 (``FROZEN.sha256``) before the first run; this refuses a
changed file. (An earlier held-out set, Bookinfo and Bank of Anthos, is gone: those two are among the
applications the project's own yardstick measures on, so they may not sit in this repository.) The same yardstick as
``tests.bench.answers`` (one ``kubevec search``-like call per question, k=10): hit@1, hit@5, MRR, facts.

Later sets were written the same way: ``apps-heldout2`` (two applications), ``apps-heldout3`` to
``apps-heldout13`` (three each, with incidents: ``incidents.yaml`` applied after the applications and
``status.yaml``, the status a kubelet or controller would write, patched through the status subresource;
and agent tasks, ``"class": "agent"``, scored by whether every expected object is among the ten).
``python -m tests.bench.held_out apps-heldout3``; ``make bench`` runs every set. Sets rotate: once a set's
first-sight score is reported and its misses are read to find what fails, it becomes a set to tune on,
and the newer one is measured. The controller runs as deployed (built-in kinds described, see
``answers.AS_DEPLOYED``): the kinds a question names are read from those records.

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

import yaml

from tests.bench.answers import (
    AS_DEPLOYED,
    CLUSTER,
    CONTROLLERS,
    _eventually,
    _kubectl_json,
    ask_all,
    missed,
    scores,
    share,
)
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
        _apply(plane, "-n", namespace, "-f", str(blind / folder))
    if (blind / "incidents.yaml").is_file():
        _apply(plane, "-f", str(blind / "incidents.yaml"))
    if (blind / "status.yaml").is_file():
        write_statuses(plane, [d for d in yaml.safe_load_all((blind / "status.yaml").read_text()) if d])


def _apply(plane: ControlPlane, *args: str) -> None:
    """``kubectl apply``: an object the API server refuses (an upstream manifest's missing field) is left
    out, as on any cluster, and said; the others are applied (kubectl goes on past a refused one)."""
    try:
        plane.kubectl("apply", *args)
    except RuntimeError as exc:
        print(f"    refused by the API server (left out): {exc}", file=sys.stderr)


def write_statuses(plane: ControlPlane, statuses: list[dict[str, Any]]) -> None:
    """Write the status a kubelet or an operator would (this cluster has neither): on the named object, or
    on every Pod a ``selector`` matches once its workload has made them."""
    for entry in statuses:
        kind, namespace = str(entry["kind"]).lower(), str(entry["namespace"])
        if "selector" in entry:
            start_jobs(plane, namespace=namespace, selector=str(entry["selector"]))

            def pods(selector: str = str(entry["selector"]), namespace: str = namespace) -> list[str] | None:
                found = _kubectl_json(plane, "pods", "-n", namespace, "-l", selector)
                return [str(pod["metadata"]["name"]) for pod in found] or None

            names = _eventually(pods, timeout=60, what=f"Pods {entry['selector']} in {namespace}")
        else:
            names = [str(entry["name"])]
        for name in names:
            status = dict(entry["status"])
            if "replicas" in status and any(count not in status for count in _COUNTS):
                written = json.loads(plane.kubectl("get", kind, name, "-n", namespace, "-o", "json")).get("status", {})
                status = consistent(status, written=written)
            plane.kubectl(
                "patch", kind, name, "-n", namespace, "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": status}),
            )  # fmt: skip


def start_jobs(plane: ControlPlane, *, namespace: str, selector: str) -> None:
    """Make the Pod of each Job whose Pods ``selector`` matches and that has none yet, as the job controller
    would (this control plane runs none, so that the Jobs of earlier sets stay as they were measured)."""
    wanted = dict(pair.split("=", 1) for pair in selector.split(","))
    for job in _kubectl_json(plane, "jobs", "-n", namespace):
        template = job["spec"]["template"]
        labels = {**template.get("metadata", {}).get("labels", {}), "job-name": job["metadata"]["name"]}
        if not wanted.items() <= labels.items() or _kubectl_json(plane, "pods", "-n", namespace, "-l", selector):
            continue
        plane.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(job_pod(job, labels=labels)))


def job_pod(job: dict[str, Any], *, labels: dict[str, str]) -> dict[str, Any]:
    """The Pod the job controller makes of a Job: its template, owned by the Job."""
    meta = job["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{meta['name']}-",
            "labels": labels,
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"], "uid": meta["uid"], "controller": True}
            ],
        },
        "spec": job["spec"]["template"]["spec"],
    }


#: A workload's Pod counts that may not exceed its ``replicas``: the API server refuses a status that says more.
_COUNTS = ("updatedReplicas", "readyReplicas", "availableReplicas", "currentReplicas")


def consistent(status: dict[str, Any], *, written: dict[str, Any]) -> dict[str, Any]:
    """A status as its controller would write it: counts the entry does not set, as the controller wrote them
    (``written``), but no more than the ``replicas`` it sets ("replicas: 0" for a Deployment whose Pods a
    quota forbids: no Pod is updated either)."""
    replicas = int(status["replicas"])
    capped = {
        count: min(replicas, int(written[count])) for count in _COUNTS if count not in status and count in written
    }
    return {**status, **capped}


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
        controller = Controller(plane, store, Path(tmp) / "controller.log", **AS_DEPLOYED)
        started = time.monotonic()
        controller.start()
        try:
            controller.wait_ready(timeout=600)
            wait_converged(kubeconfig=plane.kubeconfig, cluster=CLUSTER, store_path=store, timeout=300, builtins=True)
        finally:
            controller.stop()
        synced = time.monotonic() - started
        result: dict[str, Any] = asyncio.run(ask_all(store, show=show, asked=asked))
    return report(result["rows"], synced=synced)


def report(rows: list[dict[str, Any]], *, synced: float) -> str:
    """The ordinary questions (hit@k, MRR, facts), then by application and by class of question, then the
    agent tasks: every expected object among the ten, and the facts they need."""
    asked = [r for r in rows if r["class"] != "agent"]
    hit1, hit5, mrr, facts = scores(asked)
    parts = [
        table(
            ["held-out questions", "hit@1", "hit@5", "MRR@10", "fact recall", "sync s"],
            [[str(len(asked)), f"{hit1:.2f}", f"{hit5:.2f}", f"{mrr:.2f}", share(facts), f"{synced:.0f}"]],
        )
    ]
    for label, field in (("namespace", "namespace"), ("class", "class")):
        groups = sorted({r[field] for r in asked})
        if len(groups) > 1:
            parts.append(table([f"by {label}", "questions", "hit@1", "hit@5", "MRR@10", "fact recall"], [
                [group or "(cluster-scoped)", str(len(chosen)), *(share(v) for v in scores(chosen))]
                for group in groups if (chosen := [r for r in asked if r[field] == group])
            ]))  # fmt: skip
    parts.append(f"not in the top 5: {', '.join(missed(asked)) or '-'}")
    if tasks := [r for r in rows if r["class"] == "agent"]:
        every = sum(1 for r in tasks if r["seen"] == r["wanted"]) / len(tasks)
        found = sum(r["seen"] for r in tasks) / max(1, sum(r["wanted"] for r in tasks))
        facts = sum(r["facts"] for r in tasks) / max(1, sum(r["of"] for r in tasks))
        parts.append(table(
            ["agent tasks", "all expected in top 10", "expected objects in top 10", "facts"],
            [[str(len(tasks)), f"{every:.2f}", f"{found:.2f}", f"{facts:.2f}"]],
        ))  # fmt: skip
        parts.append(f"tasks missing an object: {', '.join(r['id'] for r in tasks if r['seen'] < r['wanted']) or '-'}")
    return "\n".join(parts)


if __name__ == "__main__":
    print(run(HERE / sys.argv[1] if len(sys.argv) > 1 else BLIND))
