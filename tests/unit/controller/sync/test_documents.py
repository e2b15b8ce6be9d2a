"""DocumentBuilder: one CRD version is described once, for events and resyncs alike (bounded)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kubevec.controller.operator import NoDiffBase, NoProgress, configure
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync import documents
from kubevec.controller.sync.documents import DocumentBuilder, Unchanged
from kubevec.inference.documents import Document, content_hash
from kubevec.inference.instances import InstancePolicy
from kubevec.inference.manifests import is_crd, load_manifests
from tests.conftest import SAMPLE_CRDS


def sample_crd() -> dict[str, Any]:
    crd = next(d for d in load_manifests(SAMPLE_CRDS.read_text()) if is_crd(d))
    body = copy.deepcopy(dict(crd))
    body["metadata"] = {**body["metadata"], "uid": "u-1", "resourceVersion": "10"}
    return body


def test_a_crd_version_is_described_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = documents.describe_crd

    def counting(crd: Any, *, cluster: str) -> Any:
        calls.append(crd["metadata"]["resourceVersion"])
        return real(crd, cluster=cluster)

    monkeypatch.setattr(documents, "describe_crd", counting)
    builder = DocumentBuilder(cluster="c", metrics=Metrics())
    crd = sample_crd()
    first = builder.capability(crd)
    assert builder.capability(copy.deepcopy(crd)) == first  # the listing after the event
    assert calls == ["10"]
    changed = copy.deepcopy(crd)
    changed["metadata"]["resourceVersion"] = "11"
    changed["spec"]["names"]["shortNames"] = ["changed"]
    assert builder.capability(changed) != first
    assert calls == ["10", "11"]
    anonymous = copy.deepcopy(crd)
    del anonymous["metadata"]["uid"]  # no identity: never cached
    builder.capability(anonymous)
    builder.capability(anonymous)
    assert calls == ["10", "11", "10", "10"]


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its size the oldest CRD version is forgotten, so it is described again; the newest are not."""
    calls = []
    real = documents.describe_crd

    def counting(crd: Any, *, cluster: str) -> Any:
        calls.append(crd["metadata"]["resourceVersion"])
        return real(crd, cluster=cluster)

    monkeypatch.setattr(documents, "describe_crd", counting)
    monkeypatch.setattr(documents, "CAPABILITY_CACHE_SIZE", 3)
    builder = DocumentBuilder(cluster="c", metrics=Metrics())
    crds = []
    for version in range(10):
        crd = sample_crd()
        crd["metadata"] = {**crd["metadata"], "uid": f"u-{version}", "resourceVersion": str(version)}
        crds.append(crd)
        builder.capability(crd)
    assert len(calls) == 10
    for crd in crds[-3:]:  # the three most recent are still known
        builder.capability(copy.deepcopy(crd))
    assert len(calls) == 10
    builder.capability(copy.deepcopy(crds[0]))  # evicted: built again
    assert calls[-1] == "0"
    assert len(calls) == 11


def test_kopf_keeps_no_state_on_watched_objects() -> None:
    """No diff base and no progress: nothing to copy per event, nothing that could be patched."""
    import kopf

    settings = kopf.OperatorSettings()
    configure(settings)
    assert isinstance(settings.persistence.diffbase_storage, NoDiffBase)
    assert isinstance(settings.persistence.progress_storage, NoProgress)
    body = {"metadata": {"name": "x", "annotations": {"a": "b"}}, "spec": {"big": list(range(10))}}
    assert settings.persistence.diffbase_storage.build(body=body) is None
    essence = {"spec": {}}
    assert settings.persistence.progress_storage.clear(essence=essence) is essence  # no copy


def test_what_the_store_holds_built_from_the_same_source_is_not_built_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restart against an unchanged cluster: kopf's listing and the resync see every object; none is built."""
    described: list[str] = []
    real = documents.describe_crd

    def counting(crd: Any, *, cluster: str) -> Any:
        described.append(crd["metadata"]["name"])
        return real(crd, cluster=cluster)

    monkeypatch.setattr(documents, "describe_crd", counting)
    stored: dict[tuple[str, str], str] = {}
    builder = DocumentBuilder(cluster="c", metrics=Metrics(), built_from=lambda c, i: stored.get((c, i)))
    crd = {**sample_crd(), "metadata": {**sample_crd()["metadata"], "generation": 3}}
    first = builder.capability(crd)
    assert isinstance(first, Document)
    stored[("capabilities", first.id)] = first.built_from  # written, as the engine would
    assert first.built_from.startswith("u-1/3/")
    assert first.built_from.endswith(documents.builder_fingerprint())  # changed builder code rebuilds everything
    fresh = DocumentBuilder(cluster="c", metrics=Metrics(), built_from=lambda c, i: stored.get((c, i)))
    assert fresh.capability(crd) == Unchanged("capabilities", first.id)
    assert described == [crd["metadata"]["name"]]
    bumped = {**crd, "metadata": {**crd["metadata"], "generation": 4}}  # the spec changed
    assert isinstance(fresh.capability(bumped), Document)

    policy = InstancePolicy()
    pod = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "shop", "uid": "u-9", "resourceVersion": "41"},
        "data": {"k": "v"},
    }
    built = builder.instance(pod, plural="configmaps", policy=policy)
    assert isinstance(built, Document)
    assert built.built_from.startswith("u-9/41/")
    assert built.content_hash == content_hash(text=built.text, metadata=built.metadata)  # bookkeeping, not hashed
    stored[("instances", built.id)] = built.built_from
    assert fresh.instance(pod, plural="configmaps", policy=policy) == Unchanged("instances", built.id)
    newer = {**pod, "metadata": {**pod["metadata"], "resourceVersion": "42"}}
    again = fresh.instance(newer, plural="configmaps", policy=policy)
    assert isinstance(again, Document)
    assert again.content_hash == built.content_hash  # same document: the engine will skip the write
    other_policy = InstancePolicy(configmap_keys=False)
    assert isinstance(fresh.instance(pod, plural="configmaps", policy=other_policy), Document)
    anonymous = {**pod, "metadata": {"name": "settings", "namespace": "shop"}}
    plain = fresh.instance(anonymous, plural="configmaps", policy=policy)
    assert isinstance(plain, Document)
    assert plain.built_from == ""


def test_the_fingerprint_covers_the_builders_and_not_the_providers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 31: editing the Voyage client's retry code changed the fingerprint and rebuilt every document."""
    import shutil

    from kubevec import inference

    root = Path(inference.__file__).parent
    copy = tmp_path / "inference"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    monkeypatch.setattr(inference, "__file__", str(copy / "__init__.py"))
    fingerprint = documents.builder_fingerprint.__wrapped__  # computed once per process otherwise
    before = fingerprint()
    (copy / "providers" / "embedders" / "voyage.py").write_text("# a retry tweak\n", encoding="utf-8")
    (copy / "providers" / "llm.py").write_text("# a prompt client tweak\n", encoding="utf-8")
    assert fingerprint() == before
    with (copy / "redaction" / "patterns.py").open("a", encoding="utf-8") as builder:
        builder.write("\n# a redaction rule\n")
    after_rule = fingerprint()
    assert after_rule != before
    with (copy / "redaction" / "rules" / "gitleaks.toml").open("a", encoding="utf-8") as rules:
        rules.write("\n# a provider's token format\n")  # data the gate reads rebuilds as its code does
    assert fingerprint() != after_rule


def test_the_fingerprint_covers_what_the_builders_import_from_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 49 moved the camelCase splitter, the depth guard and the payload fields to ``core/``: a change
    there changes documents as a change in ``inference/`` does, so it must rebuild them too."""
    import shutil

    from kubevec import core

    copy = tmp_path / "core"
    shutil.copytree(Path(core.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(core, "__file__", str(copy / "__init__.py"))
    fingerprint = documents.builder_fingerprint.__wrapped__
    before = fingerprint()
    with (copy / "words.py").open("a", encoding="utf-8") as splitter:
        splitter.write("\n# a word rule\n")
    assert fingerprint() != before


def _sample(metrics: Metrics, reason: str) -> float:
    return metrics.registry.get_sample_value("kubevec_documents_skipped_total", {"reason": reason}) or 0.0


def test_a_hostile_object_is_skipped_counted_and_named_and_the_next_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anything a builder raises skips that object only (a RecursionError failed whole resyncs)."""
    metrics = Metrics()
    builder = DocumentBuilder(cluster="c", metrics=metrics)
    good = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "fine", "namespace": "ns", "uid": "u1", "resourceVersion": "1"},
        "spec": {"size": "small"},
    }
    huge = {
        **good,
        "metadata": {**good["metadata"], "name": "huge"},
        "spec": {f"k{i}": list(range(60)) for i in range(5000)},
    }
    assert builder.instance(huge, plural="widgets", policy=InstancePolicy()) is None
    assert builder.skipped == {"widgets/ns/huge": "nodes"}
    assert _sample(metrics, "nodes") == 1

    def explode(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(documents, "build_instance", explode)
    assert builder.instance(good, plural="widgets", policy=InstancePolicy()) is None
    assert builder.skipped["widgets/ns/fine"] == "error"
    assert _sample(metrics, "error") == 1
    monkeypatch.undo()
    built = builder.instance(good, plural="widgets", policy=InstancePolicy())
    assert built is not None
    assert "widgets/ns/fine" not in builder.skipped


def test_a_watch_events_document_id_is_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 49: the event computed the id, the builder again, the document a third time, and the three
    were compared; now the id the event computed is the document's, and nobody computes it again."""
    computed: list[object] = []
    real = documents.ResourceRef.instance_id

    def counting(self: Any, **kwargs: Any) -> str:
        computed.append(kwargs)
        return real(self, **kwargs)

    monkeypatch.setattr(documents.ResourceRef, "instance_id", counting)
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "shop", "uid": "u-7", "resourceVersion": "3"},
        "data": {"k": "v"},
    }
    builder = DocumentBuilder(cluster="c", metrics=Metrics())
    given = "c/shop/core/v1/ConfigMap/cfg"
    document = builder.instance(body, plural="configmaps", policy=InstancePolicy(), document_id=given)
    assert isinstance(document, Document)
    assert document.id == given
    assert document.built_from.startswith("u-7/3/")
    assert computed == []
    # without one (the resync's path), the builder computes it: once
    document = builder.instance(body, plural="configmaps", policy=InstancePolicy())
    assert isinstance(document, Document)
    assert document.id == given
    assert len(computed) == 1
