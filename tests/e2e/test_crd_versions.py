"""CRD versions: a kind served only at a version its group does not prefer is indexed at its own best
version, and a CRD upgraded to a new version moves its instances to the new ids with none left behind."""

from __future__ import annotations

import copy
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from kubevec.controller.app import App
from tests.controlplane.cluster import ControlPlane
from tests.doubles.embedders import CountingEmbedder
from tests.e2e.controller_harness import apply, eventually, iid, namespaced_crd, running_controller, stored

pytestmark = pytest.mark.e2e

GROUP = "upgrade.kubevec.test"
CRD_NAME = f"lamps.{GROUP}"
INSTANCES = 12
SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A lamp that lights a room.",
    "properties": {
        "spec": {"type": "object", "properties": {"watts": {"type": "integer", "description": "Power draw."}}}
    },
}


def lamp_crd(
    *versions: tuple[str, bool], group: str = GROUP, plural: str = "lamps", kind: str = "Lamp"
) -> dict[str, Any]:
    """A CRD (by default the Lamp CRD) serving ``versions`` as (name, storage) pairs."""
    crd = namespaced_crd(group=group, plural=plural, kind=kind, schema=SCHEMA)
    crd["spec"]["versions"] = [
        {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMA)}}
        for name, storage in versions
    ]
    return crd


def controller(plane: ControlPlane, store: Path) -> AbstractContextManager[App]:
    """The controller with a resync far away: whatever happens here happens by event."""
    return running_controller(
        plane=plane,
        store_path=store,
        embedder=CountingEmbedder(),
        resync_interval_seconds=3600,
        builtin_capabilities=False,
    )


def in_group(store: Path, group: str) -> set[str]:
    return {i for i in stored(store, "instances") if f"/{group}/" in i}


def test_a_new_preferred_version_moves_every_instance_and_leaves_no_orphan(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    control_plane.kubectl("create", "namespace", "upgrade")
    apply(control_plane, lamp_crd(("v1alpha1", True)))
    control_plane.kubectl("wait", "--for=condition=Established", f"crd/{CRD_NAME}")
    names = [f"lamp-{i:02d}" for i in range(INSTANCES)]
    apply(
        control_plane,
        [
            {
                "apiVersion": f"{GROUP}/v1alpha1",
                "kind": "Lamp",
                "metadata": {"name": name, "namespace": "upgrade"},
                "spec": {"watts": 40},
            }
            for name in names
        ],
    )
    store = tmp_path / "chroma"
    old = {iid("upgrade", GROUP, "v1alpha1", "Lamp", name) for name in names}
    new = {iid("upgrade", GROUP, "v1", "Lamp", name) for name in names}
    with controller(control_plane, store):
        eventually(lambda: in_group(store, GROUP) == old, timeout=60, message="the v1alpha1 lamps were not stored")
        apply(control_plane, lamp_crd(("v1alpha1", False), ("v1", True)))
        # By event: the resync that would also collect the v1alpha1 documents is an hour away.
        eventually(lambda: in_group(store, GROUP) == new, timeout=60, message="the lamps did not move to v1 alone")
        assert "v1" in stored(store, "capabilities")[CRD_NAME]["metadata"]["served_versions"]
        texts = [doc["text"] for i, doc in stored(store, "instances").items() if i in new]
        assert all(f"apiVersion: {GROUP}/v1" in text and "v1alpha1" not in text for text in texts)


def test_a_kind_only_at_a_version_its_group_does_not_prefer_is_indexed(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """prometheus-operator's AlertmanagerConfig is v1alpha1 in a group whose other kinds are v1."""
    group = "mixed.kubevec.test"
    control_plane.kubectl("create", "namespace", "mixed")
    apply(
        control_plane,
        [
            lamp_crd(("v1", True), group=group, plural="switches", kind="Switch"),
            lamp_crd(("v1alpha1", True), group=group, plural="dimmers", kind="Dimmer"),
            lamp_crd(("v1alpha1", False), ("v1beta1", True), group=group, plural="timers", kind="Timer"),
        ],
    )
    control_plane.kubectl(
        "wait", "--for=condition=Established", f"crd/switches.{group}", f"crd/dimmers.{group}", f"crd/timers.{group}"
    )
    objects = [("v1", "Switch", "s1"), ("v1alpha1", "Dimmer", "d1"), ("v1beta1", "Timer", "t1")]
    apply(
        control_plane,
        [
            {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": name, "namespace": "mixed"}}
            for version, kind, name in objects
        ],
    )
    store = tmp_path / "chroma"
    want = {iid("mixed", group, version, kind, name) for version, kind, name in objects}
    with controller(control_plane, store):
        eventually(
            lambda: in_group(store, group) == want, timeout=60, message="not every kind of the group was indexed"
        )
        apply(
            control_plane,
            {"apiVersion": f"{group}/v1alpha1", "kind": "Dimmer", "metadata": {"name": "d2", "namespace": "mixed"}},
        )
        want.add(iid("mixed", group, "v1alpha1", "Dimmer", "d2"))
        eventually(
            lambda: in_group(store, group) == want, timeout=30, message="a new Dimmer was not indexed by its event"
        )
