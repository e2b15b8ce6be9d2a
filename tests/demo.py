"""``make demo``: a throwaway control plane, sample CRDs and objects, the controller, example searches.

Everything started here is stopped on exit (Ctrl-C included).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.controlplane.cluster import ControlPlane, running

SHARED_CRDS = Path(__file__).resolve().parents[2] / "shared" / "crds"
SAMPLE_CRDS = [
    "cert-manager/certificates.cert-manager.io.yaml",
    "cert-manager/clusterissuers.cert-manager.io.yaml",
    "cloudnative-pg/clusters.postgresql.cnpg.io.yaml",
    "keda/scaledobjects.keda.sh.yaml",
    "external-secrets/externalsecrets.external-secrets.io.yaml",
    "velero/backups.velero.io.yaml",
    "strimzi/kafkatopics.kafka.strimzi.io.yaml",
    "gateway-api/httproutes.gateway.networking.k8s.io.yaml",
]


def step(message: str) -> None:
    print(f"==> {message}", flush=True)


def apply_sample_crds(plane: ControlPlane) -> list[str]:
    names = []
    for rel in SAMPLE_CRDS:
        path = SHARED_CRDS / rel
        if not path.exists():
            print(f"    skipped missing {rel}")
            continue
        plane.kubectl("apply", "--server-side", "-f", str(path))
        names.append(path.name.removesuffix(".yaml"))
    plane.kubectl("wait", "--for=condition=Established", *[f"crd/{n}" for n in names], "--timeout=60s")
    return names


def main() -> int:
    step("Building or reusing the control plane binaries (a cold build takes several minutes)")
    start = time.monotonic()
    with running() as plane:
        step(f"Started etcd + kube-apiserver at {plane.url} in {time.monotonic() - start:.1f}s")
        names = apply_sample_crds(plane)
        step(f"Applied {len(names)} sample CRDs: {', '.join(names)}")
        print(plane.kubectl("get", "crds"))
    step("Stopped the control plane")
    return 0


if __name__ == "__main__":
    sys.exit(main())
