"""Aggregated discovery: each group's first version is the preferred one; a stale group is skipped."""

from __future__ import annotations

import logging

import pytest

from controller.kube import _aggregated_resources


def group(name: str, *versions: dict[str, object]) -> dict[str, object]:
    return {"metadata": {"name": name}, "versions": list(versions)}


def version(name: str, *resources: dict[str, object], freshness: str = "Current") -> dict[str, object]:
    return {"version": name, "resources": list(resources), "freshness": freshness}


def resource(plural: str, kind: str | None, *, scope: str = "Namespaced") -> dict[str, object]:
    out: dict[str, object] = {"resource": plural, "scope": scope, "verbs": ["get", "list", "watch"]}
    if kind:
        out["responseKind"] = {"group": "", "version": "", "kind": kind}
    return out


def test_the_first_version_is_the_preferred_one_and_scope_is_read() -> None:
    listing = {
        "kind": "APIGroupDiscoveryList",
        "items": [
            group(
                "db.example.com",
                version("v2", resource("clusters", "Cluster"), resource("backups", "Backup", scope="Cluster")),
                version("v1", resource("clusters", "Cluster"), resource("legacies", "Legacy")),
            ),
            group("", version("v1", resource("pods", "Pod"))),
        ],
    }
    found = {(r.group, r.version, r.plural): r for r in _aggregated_resources(listing)}
    assert set(found) == {("db.example.com", "v2", "clusters"), ("db.example.com", "v2", "backups"), ("", "v1", "pods")}
    assert found["db.example.com", "v2", "clusters"].namespaced
    assert not found["db.example.com", "v2", "backups"].namespaced
    assert found["", "v1", "pods"].verbs == ("get", "list", "watch")
    assert found["", "v1", "pods"].kind == "Pod"


def test_a_stale_group_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    listing = {
        "items": [
            group("metrics.k8s.io", version("v1beta1", resource("pods", "PodMetrics"), freshness="Stale")),
            group("apps", version("v1", resource("deployments", "Deployment"))),
        ]
    }
    with caplog.at_level(logging.WARNING):
        found = _aggregated_resources(listing)
    assert [r.plural for r in found] == ["deployments"]
    assert "group=metrics.k8s.io" in caplog.text


def test_odd_entries_are_left_out_instead_of_failing() -> None:
    listing = {"items": [group("empty"), group("x.io", version("v1", resource("things", None), {"scope": "Cluster"}))]}
    assert _aggregated_resources(listing) == []
