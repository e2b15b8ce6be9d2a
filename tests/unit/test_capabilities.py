"""Capability documents from real CRDs: every shared CRD works, texts fit the model's window."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from inference.capabilities import describe_builtin, describe_crd, resource_id
from inference.documents import InferenceError
from inference.manifests import is_crd, iter_manifest_files, load_manifests
from inference.tokens import MAX_TOKENS, load_tokenizer
from tests.conftest import SHARED_CRDS


def shared_crds() -> list[Mapping[str, Any]]:
    return [
        doc
        for path in iter_manifest_files([SHARED_CRDS])
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


def test_yaml_value_tag_is_read_as_a_string() -> None:
    path = SHARED_CRDS / "prometheus-operator" / "alertmanagerconfigs.monitoring.coreos.com.yaml"
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
    before = describe_crd(crd).content_hash
    crd["metadata"]["resourceVersion"] = "999"
    crd["metadata"]["annotations"] = {"touched": "yes"}
    crd["status"] = {"conditions": [{"type": "Established", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    assert describe_crd(crd).content_hash == before
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "Something else entirely."
    assert describe_crd(crd).content_hash != before


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
    assert resource_id(plural="pods", group="") == "pods"


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InferenceError, match="does not exist"):
        list(iter_manifest_files([tmp_path / "nope.yaml"]))
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [unclosed")
    with pytest.raises(InferenceError, match="not valid YAML"):
        load_manifests(bad.read_text(), source=str(bad))
