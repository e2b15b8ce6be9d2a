"""The control plane is real: CRDs become Established, instances are stored, kopf sees both."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import kopf
from kopf.testing import KopfRunner

from tests.conftest import SAMPLE_CRDS
from tests.controlplane.cluster import ControlPlane

CERTIFICATE = {
    "apiVersion": "pki.samples.kubevec.io/v1",
    "kind": "Certificate",
    "metadata": {"name": "api-tls", "namespace": "default"},
    "spec": {"secretName": "api-tls", "dnsNames": ["api.example.com"], "issuerRef": {"name": "letsencrypt"}},
}


def test_version_is_the_built_release(control_plane: ControlPlane) -> None:
    version = control_plane.get_json("/version")
    assert version["gitVersion"].startswith("v1.3")
    assert int(version["minor"].rstrip("+")) >= 34


def test_crd_established_and_seen_by_kopf(control_plane: ControlPlane) -> None:
    control_plane.kubectl("apply", "--server-side", "-f", str(SAMPLE_CRDS))
    control_plane.kubectl("wait", "--for=condition=Established", "-f", str(SAMPLE_CRDS), "--timeout=60s")
    control_plane.kubectl("apply", "-f", "-", input=json.dumps(CERTIFICATE))

    registry = kopf.OperatorRegistry()
    seen: dict[str, set[str]] = {"crds": set(), "certificates": set()}
    both_seen = threading.Event()

    def remember(key: str, name: str) -> None:
        seen[key].add(name)
        if "certificates.pki.samples.kubevec.io" in seen["crds"] and "api-tls" in seen["certificates"]:
            both_seen.set()

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
        return kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.event("apiextensions.k8s.io", "customresourcedefinitions", registry=registry)
    def on_crd(name: str, **_: Any) -> None:
        remember("crds", name)

    @kopf.on.event("pki.samples.kubevec.io", "certificates", registry=registry)
    def on_certificate(name: str, **_: Any) -> None:
        remember("certificates", name)

    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    settings.watching.server_timeout = 10
    with KopfRunner(["run", "--all-namespaces", "--standalone"], registry=registry, settings=settings, timeout=30):
        deadline = time.monotonic() + 60
        while not both_seen.is_set() and time.monotonic() < deadline:
            both_seen.wait(0.5)
    assert both_seen.is_set(), f"kopf saw {seen}"


async def test_aggregated_discovery_finds_what_one_request_per_group_finds(control_plane: ControlPlane) -> None:
    """Two requests instead of one per group (800 CRDs: 2.1 s -> ~0.1 s), with the same answer."""
    from kubevec.controller.kube.client import KubeReader, load_api_client

    control_plane.kubectl("apply", "--server-side", "-f", str(SAMPLE_CRDS))
    control_plane.kubectl("wait", "--for=condition=Established", "-f", str(SAMPLE_CRDS), "--timeout=60s")
    reader = KubeReader(api=load_api_client(control_plane.kubeconfig))
    paths: list[str] = []
    get = reader.get

    async def counted(path: str, **kwargs: Any) -> Any:
        paths.append(path)
        return await get(path, **kwargs)

    reader.get = counted  # type: ignore[method-assign]
    aggregated = await reader.discover()
    assert paths == ["/api", "/apis"]
    paths.clear()
    per_group = await reader.discover(aggregated=False)
    assert len(paths) > 10
    assert set(aggregated) == set(per_group)
    assert len(aggregated) == len(per_group)
    kinds = {(r.ref.group, r.ref.version, r.ref.kind): r for r in aggregated}
    assert kinds["pki.samples.kubevec.io", "v1", "Certificate"].namespaced
    assert ("apps", "v1", "Deployment") in kinds
    assert ("", "v1", "Namespace") in kinds
    assert not kinds["", "v1", "Namespace"].namespaced


def test_hundreds_of_services_get_a_cluster_ip(control_plane: ControlPlane) -> None:
    """Scale tests create many Services; a /24 service range refused the ~254th ("range is full")."""
    namespace = "many-services"
    services = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": f"svc-{i}", "namespace": namespace},
            "spec": {"selector": {"app": f"app-{i}"}, "ports": [{"port": 80}]},
        }
        for i in range(300)
    ]
    manifest = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, *services],
    }
    try:
        control_plane.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(manifest))
        listed = control_plane.get_json(f"/api/v1/namespaces/{namespace}/services")["items"]
        assert len([s for s in listed if s["spec"].get("clusterIP")]) == 300
    finally:
        control_plane.kubectl("delete", "namespace", namespace, "--wait=false", "--ignore-not-found")
