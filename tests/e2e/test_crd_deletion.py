"""Deleting a CRD purges its capability and every instance document by event, not at the next resync."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from tests.controlplane.cluster import ControlPlane
from tests.doubles.embedders import CountingEmbedder
from tests.e2e.controller_harness import apply, eventually, gadget_crd, running_controller, stored

pytestmark = pytest.mark.e2e

GROUP = "purge.kubevec.test"
CRD_NAME = f"gadgets.{GROUP}"
INSTANCES = 80


def retried(record: logging.LogRecord) -> bool:
    """kopf's own retried request (e.g. 429 while another test's new CRD initialises its storage)."""
    return record.name.startswith("kopf.") and "will retry" in record.getMessage()


def test_deleting_a_crd_purges_its_instances_within_seconds(
    control_plane: ControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    control_plane.kubectl("create", "namespace", "purge")
    apply(control_plane, gadget_crd())
    control_plane.kubectl("wait", "--for=condition=Established", f"crd/{CRD_NAME}")
    apply(
        control_plane,
        [
            {
                "apiVersion": f"{GROUP}/v1",
                "kind": "Gadget",
                "metadata": {"name": f"g{i:03d}", "namespace": "purge"},
                "spec": {"colour": "red" if i % 2 else "blue"},
            }
            for i in range(INSTANCES)
        ],
    )
    store = tmp_path / "chroma"
    with (
        caplog.at_level(logging.INFO),
        running_controller(
            plane=control_plane,
            store_path=store,
            embedder=CountingEmbedder(),
            resync_interval_seconds=3600,
            builtin_capabilities=False,
        ) as app,
    ):

        def gadgets() -> list[str]:
            return [i for i in stored(store, "instances") if f"/{GROUP}/v1/Gadget/" in i]

        eventually(lambda: len(gadgets()) == INSTANCES, timeout=60, message="gadgets never all stored")
        assert CRD_NAME in stored(store, "capabilities")
        resyncs = app.last_full_resync
        deleted_at = time.monotonic()
        control_plane.kubectl("delete", "crd", CRD_NAME, "--wait=false")
        eventually(lambda: not gadgets(), timeout=15, message="instances of a deleted CRD still stored")
        eventually(lambda: CRD_NAME not in stored(store, "capabilities"), timeout=15)
        elapsed = time.monotonic() - deleted_at
        assert app.last_full_resync == resyncs, "a resync, not the deletion event, cleaned up"
    assert elapsed < 15
    problems = [
        r
        for r in caplog.records
        if (r.exc_info or r.levelno >= logging.ERROR or "Traceback" in r.message) and not retried(r)
    ]
    assert not problems, [r.getMessage() for r in problems]
    assert any("Purged instances of a deleted CRD" in r.getMessage() for r in caplog.records)
