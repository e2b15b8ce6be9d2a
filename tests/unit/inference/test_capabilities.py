"""Capability documents from real CRDs: every shared CRD works, texts fit the model's window."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kubevec.core.errors import InferenceError
from kubevec.inference.capabilities import describe_builtin, describe_crd
from kubevec.inference.identity import ResourceRef
from kubevec.inference.manifests import is_crd, iter_manifest_files, load_manifests
from kubevec.inference.tokens import MAX_TOKENS, load_tokenizer
from tests.conftest import SAMPLE_CRDS, corpus


def shared_crds() -> list[Mapping[str, Any]]:
    return [
        doc
        for path in iter_manifest_files([corpus()])
        for doc in load_manifests(path.read_text(), source=str(path))
        if is_crd(doc)
    ]


@pytest.fixture(scope="module")
def crds() -> list[Mapping[str, Any]]:
    return shared_crds()


def test_every_shared_crd_is_described_within_the_window(crds: list[Mapping[str, Any]]) -> None:
    tokenizer = load_tokenizer()
    tokenizer.no_truncation()
    assert len(crds) == 118
    for crd in crds:
        doc = describe_crd(crd)
        assert doc.id == crd["metadata"]["name"]
        pieces = len(tokenizer.encode(doc.text).ids)
        assert pieces <= MAX_TOKENS, f"{doc.id}: {pieces} word pieces"
        assert doc.text.startswith(doc.kind)
        assert doc.complexity in ("low", "medium", "high")


def test_every_sample_crd_is_described_within_the_window() -> None:
    tokenizer = load_tokenizer()
    tokenizer.no_truncation()
    samples = [d for d in load_manifests(SAMPLE_CRDS.read_text(), source=str(SAMPLE_CRDS)) if is_crd(d)]
    assert len(samples) == 7
    for crd in samples:
        doc = describe_crd(crd)
        assert doc.id == crd["metadata"]["name"]
        assert len(tokenizer.encode(doc.text).ids) <= MAX_TOKENS
        assert doc.text.startswith(doc.kind)
        assert crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"].split()[2] in doc.text


def test_yaml_value_tag_is_read_as_a_string() -> None:
    path = corpus() / "prometheus-operator" / "alertmanagerconfigs.monitoring.coreos.com.yaml"
    (crd,) = load_manifests(path.read_text())
    assert describe_crd(crd).kind == "AlertmanagerConfig"
    assert "- =\n" in path.read_text()  # the file really has the bare '=' scalar


def test_certificate_document(crds: list[Mapping[str, Any]]) -> None:
    crd = next(c for c in crds if c["metadata"]["name"] == "certificates.cert-manager.io")
    doc = describe_crd(crd, cluster="prod")
    assert doc.short_names == ("cert", "certs")
    assert doc.scope == "Namespaced"
    assert "TLS certificates" in doc.capabilities
    assert "renewed" in doc.text
    assert doc.fields[0].startswith(("issuer ref", "secret name"))  # required fields first
    metadata = doc.to_document().metadata
    assert metadata["resource"] == "certificates.cert-manager.io"
    assert metadata["api_version"] == "cert-manager.io/v1"
    assert metadata["cluster"] == "prod"
    assert len(str(metadata["content_hash"])) == 64


def test_huge_crd_stays_focused(crds: list[Mapping[str, Any]]) -> None:
    crd = next(c for c in crds if c["metadata"]["name"] == "workflows.argoproj.io")
    doc = describe_crd(crd)
    assert doc.complexity == "high"
    assert len(doc.text.split()) <= 200


def test_unchanged_schema_gives_the_same_hash(crds: list[Mapping[str, Any]]) -> None:
    crd = copy.deepcopy(next(c for c in crds if c["metadata"]["name"] == "backups.velero.io"))
    before = describe_crd(crd).to_document().content_hash
    crd["metadata"]["resourceVersion"] = "999"
    crd["metadata"]["annotations"] = {"touched": "yes"}
    crd["status"] = {"conditions": [{"type": "Established", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    assert describe_crd(crd).to_document().content_hash == before
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "Something else entirely."
    assert describe_crd(crd).to_document().content_hash != before


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c: c.pop("spec"), "malformed"),
        (lambda c: c["spec"].pop("names"), "malformed"),
        (lambda c: c["spec"].update(versions=[]), "versions is missing"),
        (lambda c: c["spec"].update(versions="v1"), "versions is missing"),
        (lambda c: c["spec"]["names"].update(plural=""), "no kind or plural"),
    ],
)
def test_malformed_crd_names_the_crd(crds: list[Mapping[str, Any]], mutate: Any, message: str) -> None:
    crd = copy.deepcopy(next(c for c in crds if c["metadata"]["name"] == "schedules.velero.io"))
    mutate(crd)
    with pytest.raises(InferenceError, match=rf"schedules.velero.io|{message}") as info:
        describe_crd(crd)
    assert message in str(info.value)


def test_crd_without_schema_or_description() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    doc = describe_crd(crd)
    assert doc.text.startswith("Widget (example.com)")
    assert doc.complexity == "low"
    assert doc.scope == "Cluster"


def test_builtin_kind_resolves_refs() -> None:
    components = {
        "io.k8s.api.apps.v1.Deployment": {
            "description": "Deployment enables declarative updates for Pods and ReplicaSets.",
            "properties": {"spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]}},
        },
        "io.k8s.api.apps.v1.DeploymentSpec": {
            "required": ["selector", "template"],
            "properties": {
                "replicas": {"type": "integer", "description": "Number of desired pods."},
                "selector": {"description": "Label selector for pods."},
                "strategy": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"},
            },
        },
        "io.k8s.api.apps.v1.DeploymentStrategy": {
            "description": "The deployment strategy to use to replace existing pods with new ones."
        },
    }
    doc = describe_builtin(
        kind="Deployment",
        group="apps",
        version="v1",
        plural="deployments",
        namespaced=True,
        short_names=("deploy",),
        schema=components["io.k8s.api.apps.v1.Deployment"],
        components=components,
    )
    assert doc.id == "deployments.apps"
    assert "declarative updates" in doc.text
    assert "replicas: Number of desired pods." in doc.text
    assert "strategy: The deployment strategy" in doc.text
    assert ResourceRef(group="", version="v1", plural="pods", kind="Pod").resource_id == "pods"


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InferenceError, match="does not exist"):
        list(iter_manifest_files([tmp_path / "nope.yaml"]))
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [unclosed")
    with pytest.raises(InferenceError, match="not valid YAML"):
        load_manifests(bad.read_text(), source=str(bad))


def by_name(crds: list[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    return next(c for c in crds if c["metadata"]["name"] == name)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # No type description at all: the spec's is used, without its link.
        ("authorizationpolicies.security.istio.io", "Configuration for access control on workloads."),
        # "Alert is the Schema for the alerts API" says nothing; the spec does.
        (
            "alerts.notification.toolkit.fluxcd.io",
            "AlertSpec defines an alerting rule for events involving a list of objects.",
        ),
        # A spec that is boilerplate too does not replace the type's own words.
        ("publications.postgresql.cnpg.io", "Publication is the Schema for the publications API"),
        # An informative type description wins, whatever the spec says.
        ("certificates.cert-manager.io", "A Certificate resource should be created"),
    ],
)
def test_description_falls_back_to_the_spec(crds: list[Mapping[str, Any]], name: str, expected: str) -> None:
    doc = describe_crd(by_name(crds, name))
    assert doc.description.startswith(expected)
    assert "http" not in doc.description


def test_boilerplate_descriptions_stay_out_of_the_text(crds: list[Mapping[str, Any]]) -> None:
    doc = describe_crd(by_name(crds, "publications.postgresql.cnpg.io"))
    assert "Schema for the" not in doc.text
    assert "desired state" not in doc.text
    assert describe_crd(by_name(crds, "alerts.notification.toolkit.fluxcd.io")).text.startswith(
        "Alert (notification.toolkit.fluxcd.io). AlertSpec defines an alerting rule"
    )


def crd_with_fields(fields: dict[str, str]) -> dict[str, Any]:
    spec = {"type": "object", "properties": {k: {"type": "string", "description": v} for k, v in fields.items()}}
    return {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [
                {
                    "name": "v1",
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


def test_one_repeated_field_term_is_no_capability() -> None:
    queues = describe_crd(crd_with_fields({"queues": "Number of queues.", "queueLengthLimit": "Queue length."}))
    assert "messaging and event streaming" not in queues.capabilities
    kafka = describe_crd(crd_with_fields({"topic": "Topic to read.", "brokers": "Broker addresses."}))
    assert "messaging and event streaming" in kafka.capabilities


def test_capability_terms_match_whatever_their_case() -> None:
    """The lexicon scans lowercased text with lowercase patterns: an upper-case entry would never match."""
    from kubevec.inference.capabilities import CAPABILITY_LEXICON

    assert [p for _, p in CAPABILITY_LEXICON if p != p.lower()] == []
    shouting = describe_crd(crd_with_fields({"TOPIC": "TOPIC to read.", "Brokers": "BROKER addresses."}))
    assert "messaging and event streaming" in shouting.capabilities
