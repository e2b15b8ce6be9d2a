"""deploy/kubevec.yaml from the chart: `helm template` with the Namespace added and Helm's bookkeeping removed.

Usage: ``python charts/tools/plain_manifests.py HELM > deploy/kubevec.yaml`` (``make manifests``).
The content is the chart's default render, object for object; only what marks an object as owned
by a Helm release (``helm.sh/chart`` and ``app.kubernetes.io/managed-by`` labels, ``helm.sh/*``
annotations) is left out, so `kubectl apply` users never see Helm claims on their objects.
A test renders again and compares.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "kubevec"
RELEASE = "kubevec"
HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/managed-by")
HEADER = (
    "# kubevec without helm: kubectl apply --server-side -f deploy/kubevec.yaml (or kubectl apply -k deploy/).\n"
    "# Generated from the chart's defaults by `make manifests` (charts/tools/plain_manifests.py); a test keeps it\n"
    "# identical to `helm template` apart from Helm's own labels and annotations.\n"
)


def strip_helm(obj: Any) -> Any:
    """``obj`` without Helm's release labels and annotations, at every level (pod templates too)."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if key in ("labels", "annotations") and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in HELM_LABELS and not k.startswith("helm.sh/")}
                if not value:
                    continue
            out[key] = strip_helm(value)
        return out
    if isinstance(obj, list):
        return [strip_helm(item) for item in obj]
    return obj


def plain_documents(rendered: str) -> list[dict[str, Any]]:
    """The Namespace, then every object of ``rendered`` without Helm's bookkeeping."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    return [namespace, *(strip_helm(doc) for doc in yaml.safe_load_all(rendered) if doc)]


def render_chart(helm: str) -> str:
    return subprocess.run(
        [helm, "template", RELEASE, str(REPO / "charts" / "kubevec"), "--namespace", NAMESPACE],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: plain_manifests.py HELM", file=sys.stderr)
        return 2
    docs = plain_documents(render_chart(argv[1]))
    sys.stdout.write(HEADER + yaml.safe_dump_all(docs, sort_keys=False, width=120))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
