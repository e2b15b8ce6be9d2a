"""Each object's latest Warning Event: read from v1 Events, metadata only, a repeat changes nothing."""

from __future__ import annotations

from typing import Any

from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.documents import DocumentBuilder
from kubevec.inference.documents import Document
from kubevec.inference.instances import InstancePolicy, build_instance
from kubevec.inference.warnings import Warnings, warning_of

UID = "0b6c3f8e-2c1d-4e5f-9a7b-1c2d3e4f5a6b"


def event(name: str, *, reason: str = "FailedMount", at: str = "2026-01-01T00:00:00Z", kind: str = "Warning",
          message: str = "MountVolume.SetUp failed for volume \"cfg\": configmap \"cfg\" not found",
          count: int = 1) -> dict[str, Any]:  # fmt: skip
    return {
        "apiVersion": "v1", "kind": "Event", "type": kind, "reason": reason, "message": message, "count": count,
        "metadata": {"name": name, "namespace": "shop"}, "lastTimestamp": at,
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "shop", "uid": UID},
    }  # fmt: skip


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop", "uid": UID,
       "resourceVersion": "7"}, "spec": {"containers": [{"name": "c", "image": "web:1"}]}}  # fmt: skip


def test_only_warnings_with_an_object_count() -> None:
    assert warning_of(event("a", kind="Normal")) is None
    assert warning_of({**event("a"), "involvedObject": {"name": "web"}}) is None  # neither uid nor kind
    assert warning_of({"type": "Warning"}) is None
    uid, warning = warning_of(event("a")) or ("", None)
    assert uid == UID
    assert warning is not None
    assert warning.reason == "FailedMount"


def test_the_latest_wins_a_repeat_changes_nothing_and_deletion_brings_back_the_one_before() -> None:
    warnings = Warnings()
    assert warnings.observe(event_type="ADDED", body=event("a")) == UID
    assert warnings.observe(event_type="ADDED", body=event("b", reason="BackOff", at="2026-01-01T01:00:00Z")) == UID
    latest = warnings.latest(UID)
    assert latest is not None
    assert latest.reason == "BackOff"
    repeat = event("b", reason="BackOff", at="2026-01-01T02:00:00Z", count=5)
    assert warnings.observe(event_type="MODIFIED", body=repeat) is None  # same reason and message: no write
    assert warnings.observe(event_type="DELETED", body=repeat) == UID
    assert (warnings.latest(UID) or latest).reason == "FailedMount"
    assert warnings.replace([]) == {UID}
    assert warnings.latest(UID) is None
    assert len(warnings) == 0


def test_a_warning_is_metadata_only_and_gated() -> None:
    plain = build_instance(POD, plural="pods").to_document()
    secret = event("a", message="login failed: postgres://app:Qz7mapleRiver@db:5432/app")
    _, warning = warning_of(secret) or ("", None)
    warned = build_instance(POD, plural="pods", warning=warning).to_document()
    assert warned.text == plain.text
    assert warned.text_hash == plain.text_hash
    assert warned.content_hash != plain.content_hash
    assert warned.metadata["warning_reason"] == "FailedMount"
    assert "Qz7mapleRiver" not in str(dict(warned.metadata))


def test_a_new_warning_changes_what_a_document_is_built_from() -> None:
    builder = DocumentBuilder(cluster="c", metrics=Metrics(), built_from=lambda *_: None)
    policy = InstancePolicy()
    plain = builder.instance(POD, plural="pods", policy=policy)
    builder.warnings.observe(event_type="ADDED", body=event("a"))
    warned = builder.instance(POD, plural="pods", policy=policy)
    assert isinstance(plain, Document)
    assert isinstance(warned, Document)
    assert plain.metadata["built_from"] != warned.metadata["built_from"]
    assert warned.metadata["warning_reason"] == "FailedMount"


def test_a_warning_without_the_objects_uid_regards_it_by_kind_and_name() -> None:
    """Events written by hand or by tools that never looked the uid up (incident fixtures, some operators)."""
    handwritten = event("a", reason="ProvisioningFailed", message='storageclass "fast" not found')
    handwritten["involvedObject"] = {"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "shop"}
    key, warning = warning_of(handwritten) or ("", None)
    assert key == "Pod/shop/web"
    assert warning is not None
    builder = DocumentBuilder(cluster="c", metrics=Metrics(), built_from=lambda *_: None)
    policy = InstancePolicy()
    plain = builder.instance(POD, plural="pods", policy=policy)
    assert builder.warnings.observe(event_type="ADDED", body=handwritten) == "Pod/shop/web"
    warned = builder.instance(POD, plural="pods", policy=policy)
    assert isinstance(plain, Document)
    assert isinstance(warned, Document)
    assert warned.metadata["warning_reason"] == "ProvisioningFailed"
    assert plain.metadata["built_from"] != warned.metadata["built_from"]  # rebuilt when it comes
    # another object of that name elsewhere is not what it regards
    other = {**POD, "metadata": {**POD["metadata"], "namespace": "lab", "uid": "another"}}
    elsewhere = builder.instance(other, plural="pods", policy=policy)
    assert isinstance(elsewhere, Document)
    assert "warning_reason" not in elsewhere.metadata
    # the uid's warnings and the name's are one history: the latest of both wins
    builder.warnings.observe(event_type="ADDED", body=event("b", reason="BackOff", at="2026-01-01T03:00:00Z"))
    assert (builder.warnings.latest(UID, key="Pod/shop/web") or warning).reason == "BackOff"
