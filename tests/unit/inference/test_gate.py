"""The gate every document value passes: credentials written as people write them never reach a document,
and real values (digests, ARNs, ids, Kubernetes' own labels, UUID-named objects) survive whole.

The placements are public (``gate_cases``), written from issue 40's classes; held-out ones are not here.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.inference.change_records import Stored, change_record
from kubevec.inference.documents import Document
from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import REDACTED, is_credential_name, redact_object, redact_text
from tests.unit.inference.gate_cases import CANARIES, KEEP


def gizmo(
    *,
    spec: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    name: str = "w",
    owner: str | None = None,
) -> Document:
    meta: dict[str, Any] = {"name": name, "namespace": "shop", "uid": "0b6c3f8e-2c1d-4e5f-9a7b-1c2d3e4f5a6b"}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    if owner:
        meta["ownerReferences"] = [{"kind": "ReplicaSet", "name": owner, "controller": True}]
    body = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": meta, "spec": spec or {}}
    return build_instance(body, plural="gizmos").to_document()


def everything(document: Document) -> str:
    return document.text + " " + repr(dict(document.metadata))


@pytest.mark.parametrize(
    ("kind", "field", "value", "secret"), CANARIES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CANARIES)]
)
def test_a_credential_never_reaches_a_document(kind: str, field: str, value: str, secret: str) -> None:
    placements = [
        gizmo(spec={field: value}),
        gizmo(spec={"template": {"containers": [{"name": "c", "args": value.split(" ")}]}, field: [value]}),
    ]
    if kind in ("name", "disguised"):
        placements.append(gizmo(labels={field: value[:63]} if field.isascii() else {}))
        placements.append(gizmo(annotations={f"example.com/{field}": value}))
    else:
        placements.append(gizmo(annotations={"example.com/description": value}))
    for document in placements:
        assert secret not in everything(document), (kind, field, value)


BY_TEXT = [c for c in CANARIES if c[0] != "neutral"]


@pytest.mark.parametrize(
    ("kind", "field", "value", "secret"), BY_TEXT, ids=[f"{c[0]}-{i}" for i, c in enumerate(BY_TEXT)]
)
def test_a_credential_never_reaches_a_log_line_or_a_provider(kind: str, field: str, value: str, secret: str) -> None:
    """What logs and providers see passes the same gate (``redact_text``), as raw text and as document text.
    (A chosen password under a neutral name is judged by its place, which a log line does not have.)"""
    line = f"{field}: {value}" if kind in ("name", "disguised") else value
    assert secret not in redact_text(line)
    if kind not in ("name", "disguised"):  # document text: a credential's name was judged before rendering
        assert secret not in redact_text(value, raw=False)


@pytest.mark.parametrize(("field", "value"), KEEP)
def test_real_values_survive_whole(field: str, value: str) -> None:
    assert redact_text(value, key=field) == value
    shown = gizmo(spec={field: value})
    assert REDACTED not in everything(shown), (field, value)
    assert value[:70] in shown.text


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("controller-uid", "5f2c1e7a-9b3d-4c8e-a1f0-6d7b8c9e0f1a"),
        ("batch.kubernetes.io/controller-uid", "5f2c1e7a-9b3d-4c8e-a1f0-6d7b8c9e0f1a"),
        ("pod-template-hash", "5cb4d8b4b4"),
        ("controller-revision-hash", "web-6d8f9c7b5d"),
        ("example.com/git-sha", "9fceb02d0ae598e95dc970b74767f19372d61af8"),
        ("app.kubernetes.io/revision", "9fceb02d0ae598e95dc970b74767f19372d61af8"),
        ("example.com/checksum", "8d2f3c0e1b4a5d6c7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0"),
    ],
)
def test_labels_kubernetes_and_ci_set_survive_whole(key: str, value: str) -> None:
    document = gizmo(labels={key: value})
    assert f"{key}={value}" in document.metadata["labels"]  # type: ignore[operator]
    assert f"{key}={value}" in document.text


def test_a_checksum_annotation_survives_whole() -> None:
    value = "8d2f3c0e1b4a5d6c7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d"
    assert redact_text(value, key="checksum/config") == value


def test_identity_is_never_redacted() -> None:
    """A UUID-named object read ``Gizmo <redacted>``; hash-suffixed owners lost their names."""
    name = "3f2a9c1e-7b4d-4e8a-9c0f-1a2b3c4d5e6f"
    document = gizmo(name=name, owner="payments-api-7c9d5b8f4d")
    assert document.text.startswith(f"Gizmo {name} |")
    assert document.metadata["name"] == name
    assert document.metadata["owner"] == "ReplicaSet/payments-api-7c9d5b8f4d"
    assert "owner: ReplicaSet/payments-api-7c9d5b8f4d" in document.text
    assert document.metadata["uid"] == "0b6c3f8e-2c1d-4e5f-9a7b-1c2d3e4f5a6b"


def test_disguised_credential_names_read_as_they_look() -> None:
    for name in ("pass\u200bword", "pass\u00adword", "p\u0430ssword", "tok\u0435n", "PassWord", "DBPASS", "bindpw"):
        assert is_credential_name(name), name.encode("unicode_escape")
    for name in ("bypass", "passThrough", "compass", "secretName", "communityName", "authority", "пароль"):
        assert is_credential_name(name) == (name == "пароль"), name


def test_a_change_record_never_keeps_what_the_document_dropped() -> None:
    """The history kept a secret from the old version of an object after the instance document dropped it:
    the old document was written by an older gate. Every value of a record passes the current gate."""
    before = Stored(
        text="Gizmo w | namespace: shop | apiVersion: example.com/v1 | dataSource: appuser:Qz7mapleRiver@tcp(db:3306)/o | password: hunter2x",
        metadata={"content_hash": "a" * 64, "health": "healthy"},
    )
    after = gizmo(spec={"size": "small"})
    record = change_record(
        object_id=after.id, before=before, after=Stored(text=after.text, metadata=after.metadata), at=0.0
    )
    assert record is not None
    assert "Qz7mapleRiver" not in record.text
    assert "hunter2x" not in record.text
    assert "dataSource" in record.text


def test_taint_and_label_keys_under_a_key_field_are_names_not_keys() -> None:
    """Every Pod's default toleration read ``tolerations: <redacted>:NoExecute``: ``key:
    node.kubernetes.io/not-ready`` looked random enough under a field called ``key``."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "s"},
        "spec": {
            "containers": [{"name": "c", "image": "x"}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "app.kubernetes.io/managed-by", "operator": "In"}]}
                        ]
                    }
                }
            },
        },
    }
    spec = redact_object(pod).obj["spec"]
    assert spec["tolerations"][0]["key"] == "node.kubernetes.io/not-ready"
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["key"] == "app.kubernetes.io/managed-by"
    for made_to_look_like_one in ("example.com/a8f3k2j9d8s7f6g5h4", "kubevec.io/Qz7mapleRiver2024x"):
        pod["spec"]["tolerations"][0]["key"] = made_to_look_like_one
        assert redact_object(pod).obj["spec"]["tolerations"][0]["key"] == REDACTED, made_to_look_like_one
