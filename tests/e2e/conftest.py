"""The real control plane (etcd + kube-apiserver + kube-controller-manager) for e2e tests.

One control plane per test session: starting it takes a few seconds, and tests isolate
themselves by namespace and by unique resource names instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.controlplane.cluster import ControlPlane, running


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    with running(quiet=True) as plane, pytest.MonkeyPatch.context() as mp:
        # kopf and the kubernetes client read the kubeconfig from here.
        mp.setenv("KUBECONFIG", str(plane.kubeconfig))
        mp.setenv("PATH", f"{plane.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        yield plane


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    """A control plane of the test module's own, without kube-controller-manager (nothing in it changes by
    itself): for tests that own cluster-scoped objects (a Helm release, RBAC, SyncPolicies) or kill parts."""
    with running(quiet=True, controllers=()) as plane:
        yield plane
