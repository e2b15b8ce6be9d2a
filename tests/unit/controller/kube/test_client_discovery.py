"""Discovery: each resource once, at its group's preferred version if served there, else at its own best
version (aggregated and plain discovery alike); a stale group or version is skipped."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubevec.controller.kube.client import KubeReader, _aggregated_resources
from kubevec.core.errors import KubeError


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
    found = {(r.ref.group, r.ref.version, r.ref.plural): r for r in _aggregated_resources(listing)}
    assert set(found) == {
        ("db.example.com", "v2", "clusters"),
        ("db.example.com", "v2", "backups"),
        ("db.example.com", "v1", "legacies"),  # not served at the preferred version: at its own
        ("", "v1", "pods"),
    }
    assert found["db.example.com", "v2", "clusters"].namespaced
    assert not found["db.example.com", "v2", "backups"].namespaced
    assert found["", "v1", "pods"].verbs == ("get", "list", "watch")
    assert found["", "v1", "pods"].ref.kind == "Pod"


def test_a_stale_group_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    listing = {
        "items": [
            group("metrics.k8s.io", version("v1beta1", resource("pods", "PodMetrics"), freshness="Stale")),
            group("apps", version("v1", resource("deployments", "Deployment"))),
        ]
    }
    with caplog.at_level(logging.WARNING):
        found = _aggregated_resources(listing)
    assert [r.ref.plural for r in found] == ["deployments"]
    assert "group=metrics.k8s.io" in caplog.text


def test_odd_entries_are_left_out_instead_of_failing() -> None:
    listing = {"items": [group("empty"), group("x.io", version("v1", resource("things", None), {"scope": "Cluster"}))]}
    assert _aggregated_resources(listing) == []


def test_a_kind_the_preferred_version_lacks_is_read_at_its_highest_priority_version() -> None:
    """monitoring.coreos.com: Prometheus at v1, AlertmanagerConfig at v1beta1 and v1alpha1 only."""
    listing = {
        "items": [
            group(
                "monitoring.coreos.com",
                version("v1", resource("prometheuses", "Prometheus")),
                version(
                    "v1alpha1",
                    resource("alertmanagerconfigs", "AlertmanagerConfig"),
                    resource("scrapeconfigs", "ScrapeConfig"),
                ),
                version("v1beta1", resource("alertmanagerconfigs", "AlertmanagerConfig")),
                version("v2alpha1", resource("scrapeconfigs", "ScrapeConfig"), freshness="Stale"),
            )
        ]
    }
    found = sorted((r.ref.plural, r.ref.version) for r in _aggregated_resources(listing))
    assert found == [("alertmanagerconfigs", "v1beta1"), ("prometheuses", "v1"), ("scrapeconfigs", "v1alpha1")]


class PlainDiscovery(KubeReader):
    """A server without aggregated discovery: /apis lists groups, each group version its resources."""

    def __init__(self, versions: dict[str, list[tuple[str, str]]], *, down: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        super().__init__()
        self.versions = versions
        self.down = down
        self.asked: list[str] = []

    async def get(self, path: str, **_: Any) -> Any:
        self.asked.append(path)
        if path == "/api":
            return {"versions": []}
        if path == "/apis":
            return {
                "groups": [
                    {
                        "name": "monitoring.coreos.com",
                        "preferredVersion": {"version": "v1"},
                        "versions": [{"version": v} for v in self.versions],
                    }
                ]
            }
        name = path.rsplit("/", 1)[-1]
        if name in self.down:
            raise KubeError(f"GET {path} failed: HTTP 503", reason="HTTP 503")
        return {
            "resources": [
                {"name": plural, "kind": kind, "namespaced": True, "verbs": ["list", "watch"]}
                for plural, kind in self.versions[name]
            ]
        }


async def test_plain_discovery_reads_each_kind_at_its_version_and_survives_a_version_that_is_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reader = PlainDiscovery(
        {
            "v1": [("prometheuses", "Prometheus")],
            "v1beta1": [("alertmanagerconfigs", "AlertmanagerConfig")],
            "v1alpha1": [("alertmanagerconfigs", "AlertmanagerConfig"), ("scrapeconfigs", "ScrapeConfig")],
            "v1alpha2": [("thanosrulers", "ThanosRuler")],
        },
        down={"v1alpha2"},
    )
    with caplog.at_level(logging.WARNING):
        found = sorted((r.ref.plural, r.ref.version) for r in await reader.discover(aggregated=False))
    assert found == [("alertmanagerconfigs", "v1beta1"), ("prometheuses", "v1"), ("scrapeconfigs", "v1alpha1")]
    assert "version=v1alpha2" in caplog.text


async def test_plain_discovery_skips_a_group_whose_preferred_version_is_down() -> None:
    reader = PlainDiscovery(
        {"v1": [("prometheuses", "Prometheus")], "v1alpha1": [("scrapeconfigs", "ScrapeConfig")]}, down={"v1"}
    )
    assert await reader.discover(aggregated=False) == []
