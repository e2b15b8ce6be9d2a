"""Which version a resource is read at: Kubernetes' version order, for kubevec's discovery and kopf's."""

from __future__ import annotations

import random
from typing import Any

import kopf
import pytest
from kopf._cogs.clients import scanning

from kubevec.controller.kopf_private.discovery import each_at_its_version, read_each_kind_at_its_version
from kubevec.controller.kube.versions import chosen, crd_version, version_priority

#: Kubernetes' documented order (CustomResourceDefinition versioning), highest priority first.
KUBE_ORDER = ["v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"]


def test_versions_sort_in_kubernetes_order() -> None:
    shuffled = random.Random(7).sample(KUBE_ORDER, len(KUBE_ORDER))
    assert sorted(shuffled, key=version_priority) == KUBE_ORDER


def test_the_preferred_version_wins_where_it_serves_the_resource() -> None:
    assert chosen([("v1alpha1", "a"), ("v1", "b")], preferred="v1alpha1") == ("v1alpha1", "a")
    assert chosen([("v1alpha1", "a"), ("v1beta1", "b")], preferred="v1") == ("v1beta1", "b")
    assert chosen([], preferred="v1") is None


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        ([("v1alpha1", True)], "v1alpha1"),
        ([("v1alpha1", True), ("v1", True)], "v1"),
        ([("v1", False), ("v1beta1", True)], "v1beta1"),  # v1 defined but not served yet
        ([], None),
    ],
)
def test_a_crds_instances_are_read_at_its_best_served_version(
    versions: list[tuple[str, bool]], expected: str | None
) -> None:
    crd = {"spec": {"versions": [{"name": name, "served": served} for name, served in versions]}}
    assert crd_version(crd) == expected


def resource(version: str, plural: str, *, preferred: bool) -> kopf.Resource:
    return kopf.Resource("monitoring.coreos.com", version, plural, preferred=preferred)


def test_kopf_watches_a_kind_its_groups_preferred_version_lacks_at_its_best_version() -> None:
    scanned = {
        resource("v1", "prometheuses", preferred=True),
        resource("v1alpha1", "prometheuses", preferred=False),
        resource("v1alpha1", "alertmanagerconfigs", preferred=False),
        resource("v1beta1", "alertmanagerconfigs", preferred=False),
    }
    marked = {(r.version, r.plural): r.preferred for r in each_at_its_version(scanned)}
    assert marked == {
        ("v1", "prometheuses"): True,
        ("v1alpha1", "prometheuses"): False,
        ("v1alpha1", "alertmanagerconfigs"): False,
        ("v1beta1", "alertmanagerconfigs"): True,
    }


async def test_the_patched_scan_marks_what_kopf_discovers(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scan_resources(**_: Any) -> set[kopf.Resource]:
        return {resource("v1", "prometheuses", preferred=True), resource("v1alpha1", "scrapeconfigs", preferred=False)}

    monkeypatch.setattr(scanning, "scan_resources", scan_resources)
    read_each_kind_at_its_version()
    read_each_kind_at_its_version()  # installed once, however often start-up runs
    found = await scanning.scan_resources(groups=None, settings=None, logger=None)
    assert all(r.preferred for r in found)
    assert scanning.scan_resources.__wrapped__ is scan_resources  # type: ignore[attr-defined]
