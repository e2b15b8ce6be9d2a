"""The embedded store's directory deleted under a running `kubevec run`: not ready at once, not live after a bound.

An embedded store keeps writing into the deleted files (its open handles still work), so before
this every write and every resync "succeeded" into nothing, ``/healthz`` stayed 200 and nothing
restarted the pod. A restart recreates the directory, and the first resync fills it again.
"""

from __future__ import annotations

import os
import shutil
import signal
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.controller_harness import eventually, spawn_kubevec_run

pytestmark = pytest.mark.e2e


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


@pytest.mark.parametrize("backend", ["chroma", "lancedb"])
def test_a_deleted_store_directory_fails_readiness_then_liveness(
    control_plane: ControlPlane, tmp_path: Path, backend: str
) -> None:
    store, log, health = tmp_path / "store", tmp_path / "kubevec.log", free_port()
    proc = spawn_kubevec_run(
        control_plane,
        store,
        log=log,
        KUBEVEC_STORE__BACKEND=backend,
        KUBEVEC_SERVER__HEALTH_PORT=str(health),
        KUBEVEC_SERVER__METRICS_PORT="0",
        KUBEVEC_SYNC__UNWRITABLE_RESTART_SECONDS="3",
        KUBEVEC_SYNC__RESYNC_INTERVAL_SECONDS="5",
    )
    base = f"http://127.0.0.1:{health}"
    try:
        eventually(lambda: status(f"{base}/readyz") == 200, timeout=240, message=log.read_text()[-2000:])
        assert status(f"{base}/healthz") == 200
        shutil.rmtree(store)
        eventually(lambda: status(f"{base}/readyz") == 503, timeout=30, message="readiness never failed")
        eventually(lambda: status(f"{base}/healthz") == 503, timeout=30, message="liveness never failed")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/healthz", timeout=5)
        assert "is gone" in refused.value.read().decode()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    text = log.read_text()
    assert "Cannot write the store, will restart" in text
    after = text.split("Cannot write the store", 1)[1]
    assert "Resynced the store" not in after  # no resync claims success into a deleted directory
    assert "Traceback" not in text
