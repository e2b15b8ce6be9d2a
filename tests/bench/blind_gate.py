"""The gate on blind placements (``tests/bench/blind/trust_v4.jsonl``, ``trust_v5.jsonl``): each written from
object formats alone by a session that never saw the gate, frozen by its sha256 before the first run.

Each credential is placed where its case says (a custom resource's spec, an annotation, a label, a status
message, a container's argument or environment, a probe) and the built document (text and payload) is
searched for it: a leak is the secret found anywhere. Each ordinary value is placed the same way: it is
dropped when the document holds a redaction marker (the value was judged a credential), shown when it is
there whole, and "not shown" when the builder does not show that place at all (an annotation outside the
allowlist): not the gate's doing.

``python -m tests.bench.blind_gate [trust_v5]`` prints leaks and drops by class and by placement (every set
without an argument).
"""

from __future__ import annotations

import collections
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from kubevec.core.errors import InferenceError
from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import REDACTED
from tests.bench.report import table

BLIND = Path(__file__).resolve().parent / "blind"
#: The frozen sets, oldest first: each was written blind after the gate had learned from the one before.
SETS = ("trust_v4", "trust_v5")


def cases(name: str = SETS[0]) -> list[dict[str, Any]]:
    """The frozen cases; refuses to run on a file that is not the one committed with its sha256."""
    path = BLIND / f"{name}.jsonl"
    expected = (BLIND / f"{name}.sha256").read_text().split()[0]
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != expected:
        raise SystemExit(f"{path} changed since it was frozen ({actual} != {expected})")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _meta(**more: Any) -> dict[str, Any]:
    return {"name": "w", "namespace": "shop", "uid": "0b6c3f8e-2c1d-4e5f-9a7b-1c2d3e4f5a6b", **more}


def placed(case: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The object holding the case's value where it says, and its plural."""
    where, field, value = case["where"], case["field"], case["value"]
    gizmo: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": _meta(), "spec": {}}
    if where == "spec":
        gizmo["spec"] = {field: value}
        return gizmo, "gizmos"
    if where == "annotation":
        gizmo["metadata"] = _meta(annotations={field: value})
        return gizmo, "gizmos"
    if where == "label":
        gizmo["metadata"] = _meta(labels={field: value})
        return gizmo, "gizmos"
    if where == "status_message":
        condition = {"type": "Ready", "status": "False", "reason": "Failed", "message": value}
        gizmo["status"] = {"conditions": [condition]}
        return gizmo, "gizmos"
    container: dict[str, Any] = {"name": "app", "image": "ghcr.io/acme/app:1.4.2"}
    if where == "container_arg":
        container["args"] = [value]
    elif where == "container_env":
        container["env"] = [{"name": field, "value": value}]
    elif where == "probe_exec":
        container["readinessProbe"] = {"exec": {"command": value.split(" ")}}
    elif where == "probe_http_path":
        container["readinessProbe"] = {"httpGet": {"path": value, "port": 8080}}
    else:
        raise ValueError(f"unknown placement {where!r}")
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(),
        "spec": {"template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [container]}}},
    }
    return deployment, "deployments"


def shown(case: dict[str, Any]) -> str:
    body, plural = placed(case)
    try:
        document = build_instance(body, plural=plural).to_document()
    except (InferenceError, RecursionError):
        return ""
    return "\n".join([document.text, *_strings(dict(document.metadata))])


def _strings(value: Any) -> list[str]:
    """Every string in a payload, as it is (not JSON-escaped: a value holding quotes is found whole)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return [str(value)] if value is not None else []


def measure(name: str = SETS[0]) -> dict[str, Any]:
    leaked: collections.Counter[str] = collections.Counter()
    placed_by: collections.Counter[str] = collections.Counter()
    dropped: collections.Counter[str] = collections.Counter()
    kept: collections.Counter[str] = collections.Counter()
    unseen: collections.Counter[str] = collections.Counter()
    leaks: list[str] = []
    drops: list[str] = []
    for case in cases(name):
        out = shown(case)
        label = f"{case['class']} ({case['where']})"
        if case["type"] == "secret":
            placed_by[label] += 1
            if case["secret"] in out:
                leaked[label] += 1
                leaks.append(f"{label}: {case['field']}")
        elif case["value"] in out:
            kept[label] += 1
        elif REDACTED in out:
            dropped[label] += 1
            drops.append(f"{label}: {case['field']}={case['value'][:60]}")
        else:
            unseen[label] += 1
    return {
        "secrets": sum(placed_by.values()),
        "leaked": sum(leaked.values()),
        "keep": sum(kept.values()) + sum(dropped.values()) + sum(unseen.values()),
        "dropped": sum(dropped.values()),
        "not_shown": sum(unseen.values()),
        "by_class": {k: (leaked[k], placed_by[k]) for k in sorted(placed_by)},
        "leaks": leaks,
        "drops": drops,
    }


def run(name: str = SETS[0]) -> str:
    found = measure(name)
    rows = [[label, str(n), str(total)] for label, (n, total) in found["by_class"].items() if n]
    lines = [
        f"blind placements (sha256-frozen, {name}.jsonl): {found['leaked']} of {found['secrets']} credentials leaked; "
        f"{found['dropped']} of {found['keep']} ordinary values dropped ({found['not_shown']} not shown by the builder)",
        table(["class (placement) with a leak", "leaked", "placed"], rows) if rows else "no class leaked",
        "dropped: " + ("; ".join(found["drops"]) or "none"),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    for name in sys.argv[1:] or SETS:
        print(run(name))
