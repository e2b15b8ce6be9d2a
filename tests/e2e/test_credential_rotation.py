"""A rotated token: the resync's client loads the kubeconfig again on 401 instead of failing until a restart.

kopf re-logins on its own; kubevec's own reader (resync, discovery, probe, access reviews) kept the
credentials it loaded first, so after a rotation every resync failed with 401 and /readyz stayed
503. Here the reader starts with a token the API server no longer accepts (as after a rotation:
this control plane does not look ServiceAccounts up, so a deleted one's token stays valid), then
the kubeconfig is rewritten with a good one.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest

from kubevec.controller.kube.client import KubeReader
from kubevec.core.errors import KubeError
from tests.controlplane.cluster import ControlPlane
from tests.e2e.controller_harness import eventually

pytestmark = pytest.mark.e2e


def test_the_reader_picks_up_a_rotated_token(control_plane: ControlPlane, tmp_path: Path) -> None:
    plane = control_plane
    ns = f"rotate-{secrets.token_hex(3)}"
    plane.kubectl("create", "namespace", ns)
    plane.kubectl("create", "serviceaccount", "reader", "-n", ns)
    plane.kubectl("create", "role", "reader", "--verb=list", "--resource=configmaps", "-n", ns)
    plane.kubectl("create", "rolebinding", "reader", "--role=reader", f"--serviceaccount={ns}:reader", "-n", ns)
    kubeconfig = tmp_path / "kubeconfig"
    plane.write_kubeconfig(kubeconfig, user="reader", token="expired-" + secrets.token_hex(16))
    reader = KubeReader(kubeconfig=kubeconfig)
    path = f"/api/v1/namespaces/{ns}/configmaps"
    try:
        with pytest.raises(KubeError, match="401"):
            asyncio.run(reader.get(path))
        plane.write_kubeconfig(
            kubeconfig, user="reader", token=plane.kubectl("create", "token", "reader", "-n", ns).strip()
        )
        # Before: the reader kept the dead token, and every call failed with 401 until a restart.
        listed = eventually(lambda: asyncio.run(reader.get(path)), timeout=10, message="the new token was never used")
        assert listed["kind"] == "ConfigMapList"
    finally:
        reader.close()
