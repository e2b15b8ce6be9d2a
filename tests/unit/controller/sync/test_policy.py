"""SyncPolicy evaluation: defaults, globs, namespaces, label selectors, merging."""

from __future__ import annotations

import pytest

from kubevec.controller.sync.policy import EffectivePolicy, parse_spec
from kubevec.core.errors import PolicyError


def policy(*specs: dict[str, object]) -> EffectivePolicy:
    return EffectivePolicy.merge(parse_spec(f"p{i}", spec) for i, spec in enumerate(specs))


def obj(namespace: str | None = "shop", **labels: str) -> dict[str, object]:
    return {"metadata": {"name": "x", "namespace": namespace, "labels": labels}}


def test_defaults_exclude_churny_kinds_only() -> None:
    default = EffectivePolicy()
    assert not default.watches(group="", kind="Event", plural="events")
    assert not default.watches(group="coordination.k8s.io", kind="Lease", plural="leases")
    assert not default.watches(
        group="apiextensions.k8s.io", kind="CustomResourceDefinition", plural="customresourcedefinitions"
    )
    assert default.watches(group="apps", kind="Deployment", plural="deployments")
    assert default.admits(obj())
    assert default.instance_policy.configmap_keys


def test_include_and_exclude_globs() -> None:
    p = policy(
        {
            "resources": {
                "include": [{"group": "*.io", "kind": "*"}, {"group": "core", "kind": "Service"}],
                "exclude": [{"group": "cert-manager.io", "kind": "Certificate*"}],
            }
        }
    )
    assert p.watches(group="", kind="Service", plural="services")
    assert not p.watches(group="", kind="ConfigMap", plural="configmaps")
    assert p.watches(group="velero.io", kind="Backup", plural="backups")
    assert not p.watches(group="cert-manager.io", kind="CertificateRequest", plural="certificaterequests")
    assert not p.watches(group="apps", kind="Deployment", plural="deployments")


def test_namespaces_and_labels() -> None:
    p = policy(
        {
            "namespaces": {"include": ["team-*", "shop"], "exclude": ["team-secret"]},
            "labelSelector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
            },
        },
    )
    assert p.admits(obj("shop", app="web"))
    assert p.admits(obj("team-a", app="web", tier="api"))
    assert not p.admits(obj("team-secret", app="web"))
    assert not p.admits(obj("other", app="web"))
    assert not p.admits(obj("shop", app="api"))
    assert not p.admits(obj("shop", app="web", tier="db"))
    assert not p.admits(obj(None))  # cluster-scoped objects still need the labels


def test_policies_merge_conservatively() -> None:
    p = policy({"configMapKeys": False, "annotationAllowlist": ["a/owner"]}, {"annotationAllowlist": ["b/team"]})
    assert not p.instance_policy.configmap_keys
    assert p.instance_policy.annotation_allowlist == ("a/owner", "b/team")


@pytest.mark.parametrize(
    "spec",
    [
        {"resources": {"include": "all"}},
        {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Maybe"}]}},
        {"bogus": 1},
    ],
)
def test_invalid_policy_is_a_clear_error(spec: dict[str, object]) -> None:
    with pytest.raises(PolicyError, match="SyncPolicy p0 is invalid"):
        parse_spec("p0", spec)


def test_secrets_are_indexed_only_when_a_policy_opts_in_and_never_watched() -> None:
    from kubevec.controller.sync.policy import listable, watchable

    verbs = ("get", "list", "watch")
    assert not EffectivePolicy().watches(group="", kind="Secret", plural="secrets")
    assert not policy({"secrets": False}).watches(group="", kind="Secret", plural="secrets")
    assert policy({}, {"secrets": True}).watches(group="", kind="Secret", plural="secrets")
    assert not policy({"secrets": True, "resources": {"exclude": [{"kind": "Secret"}]}}).watches(
        group="", kind="Secret", plural="secrets"
    )
    assert listable(group="", plural="secrets", verbs=verbs)  # the resync may read them...
    assert not watchable(group="", plural="secrets", verbs=verbs)  # ...kopf never streams them
    assert watchable(group="", plural="configmaps", verbs=verbs)
