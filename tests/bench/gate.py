"""The gate: canary leaks by class, false positives, and what building documents costs on ordinary and
hostile objects (3,000 objects, the slowest one named).

The placements are the public ones in ``tests/unit/inference/gate_cases``; held-out ones are not here.
"""

from __future__ import annotations

import collections
import time
from typing import Any

from kubevec.core.errors import InferenceError
from kubevec.inference.instances import build_instance
from tests.bench.report import percentile, table
from tests.unit.inference.gate_cases import CANARIES, KEEP

OBJECTS = 3000


def _gizmo(spec: dict[str, Any], *, annotations: dict[str, str] | None = None, name: str = "w") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "shop", "uid": "0b6c3f8e-2c1d-4e5f-9a7b-1c2d3e4f5a6b"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": meta, "spec": spec}


def _shown(body: dict[str, Any]) -> str:
    try:
        document = build_instance(body, plural="gizmos").to_document()
    except (InferenceError, RecursionError):
        return ""
    return document.text + " " + repr(dict(document.metadata))


def leaks() -> str:
    placed: collections.Counter[str] = collections.Counter()
    leaked: collections.Counter[str] = collections.Counter()
    for kind, field, value, secret in CANARIES:
        annotation = (
            {f"example.com/{field}": value} if kind in ("name", "disguised") else {"example.com/description": value}
        )
        for body in (_gizmo({field: value}), _gizmo({}, annotations=annotation)):
            placed[kind] += 1
            leaked[kind] += secret in _shown(body)
    false_positives = sum(
        value[:70] not in (shown := _shown(_gizmo({field: value}))) or "<redacted>" in shown for field, value in KEEP
    )
    rows: list[list[object]] = [[kind, placed[kind], leaked[kind]] for kind in placed]
    rows.append(["all", sum(placed.values()), sum(leaked.values())])
    return (
        table(["class", "placements", "reached a document"], rows)
        + f"\nfalse positives: {false_positives} of {len(KEEP)} real values dropped or changed"
    )


def _ordinary(index: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"api-{index}",
            "namespace": f"team-{index % 30}",
            "uid": f"0b6c3f8e-2c1d-4e5f-9a7b-{index:012d}",
            "labels": {"app": f"api-{index}", "app.kubernetes.io/version": f"1.{index % 9}.0"},
            "annotations": {
                "example.com/description": f"Serves the orders API for team {index % 30}; pages on-call.",
                "checksum/config": f"{index:064x}",
            },
        },
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "api",
                            "image": f"ghcr.io/acme/api-{index}:1.{index % 9}.0",
                            "args": ["--port=8080", f"--db=postgres://app:pw{index}@db/app", "--log-level=info"],
                            "env": [
                                {"name": "DB_PASSWORD", "value": f"hunter{index}"},
                                {"name": "MODE", "value": "prod"},
                            ],
                        }
                    ]
                }
            },
        },
    }


def _hostile(index: int) -> dict[str, Any]:
    payloads: list[Any] = [
        "[" * 5000 + "]" * 5000,
        "a-" * 8000,
        "a." * 8000,
        "mysql " * 3000,
        "a=" * 16000,
        {"k": [{"k": [{"k": "deep"}]}] * 40},
    ]
    return _gizmo({"payload": payloads[index % len(payloads)], "size": "small"}, name=f"hostile-{index}")


def build_cost() -> str:
    bodies = [_hostile(i) if i % 100 == 0 else _ordinary(i) for i in range(OBJECTS)]
    times: list[tuple[float, str]] = []
    failed = 0
    started = time.perf_counter()
    for body in bodies:
        one = time.perf_counter()
        try:
            build_instance(body, plural="things").to_document()
        except (InferenceError, RecursionError):
            failed += 1
        times.append((time.perf_counter() - one, str(body["metadata"]["name"])))
    total = time.perf_counter() - started
    seconds = sorted(t for t, _ in times)
    slowest = max(times)
    return table(
        ["objects", "hostile", "total s", "p50 ms", "p99 ms", "slowest ms", "slowest", "skipped or failed"],
        [[
            OBJECTS, OBJECTS // 100, f"{total:.2f}", f"{percentile(seconds, 50) * 1000:.2f}",
            f"{percentile(seconds, 99) * 1000:.2f}", f"{slowest[0] * 1000:.1f}", slowest[1], failed,
        ]],
    )  # fmt: skip


def run() -> str:
    return leaks() + "\n\n" + build_cost()


if __name__ == "__main__":
    print(run())
