"""Fingerprints of every document kubevec builds from the material in this repository (and ``../shared``).

A restructuring promises that nothing re-embeds: document texts and payloads byte-identical. This
prints one line per document (id and content hash) and a digest of them all, so two checkouts can be
compared: ``python -m tests.bench.fingerprints > before.txt``, change, run again, ``diff``.

Inputs: the bench applications' manifests (``tests/bench/apps``: each object as an instance and each
CRD as a capability), the public gate placements and keepers, the demo samples under ``deploy/``,
and the shared CRD corpus when it is there.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from kubevec.core.errors import InferenceError
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.instances import build_instance
from tests.unit.inference.gate_cases import CANARIES, KEEP

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "crds"


def _manifests() -> Iterator[Mapping[str, Any]]:
    paths = sorted((ROOT / "tests" / "bench" / "apps").rglob("*.yaml")) + sorted((ROOT / "deploy").rglob("*.yaml"))
    if SHARED.is_dir():
        paths += sorted(SHARED.rglob("*.yaml"))
    for path in paths:
        try:
            for body in yaml.safe_load_all(path.read_text()):
                if isinstance(body, Mapping):
                    yield from _items(body)
        except yaml.YAMLError:
            continue


def _items(body: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    if isinstance(body.get("items"), list):
        for item in body["items"]:
            if isinstance(item, Mapping):
                yield item
    elif "kind" in body:
        yield body


def _gizmos() -> Iterator[Mapping[str, Any]]:
    for index, (kind, field, value, _secret) in enumerate(CANARIES):
        meta: dict[str, Any] = {"name": f"canary-{index}", "namespace": "shop", "uid": f"uid-{index}"}
        spec: dict[str, Any] = {field: value}
        yield {"apiVersion": "example.com/v1", "kind": kind, "metadata": meta, "spec": spec}
    for index, (field, value) in enumerate(KEEP):
        meta = {"name": f"keep-{index}", "namespace": "shop", "uid": f"keep-{index}"}
        yield {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": meta, "spec": {field: value}}


def _plural(kind: str) -> str:
    lower = kind.lower()
    return lower + ("es" if lower.endswith("s") else "s")


def lines() -> Iterator[str]:
    for body in [*_manifests(), *_gizmos()]:
        kind = str(body.get("kind", ""))
        try:
            if kind == "CustomResourceDefinition":
                capability = describe_crd(body).to_document()
                yield f"capability {capability.id} {capability.content_hash}"
            else:
                document = build_instance(body, plural=_plural(kind)).to_document()
                yield f"instance {document.id} {document.content_hash}"
        except (InferenceError, RecursionError, ValueError, TypeError, KeyError) as error:
            yield f"error {kind} {body.get('metadata', {}).get('name') if isinstance(body.get('metadata'), Mapping) else ''} {type(error).__name__}"


def main() -> None:
    digest = hashlib.sha256()
    count = 0
    for line in lines():
        print(line)
        digest.update(line.encode() + b"\n")
        count += 1
    print(f"documents={count} digest={digest.hexdigest()}", file=sys.stderr)


if __name__ == "__main__":
    main()
