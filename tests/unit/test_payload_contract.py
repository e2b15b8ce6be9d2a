"""The payload contract between the builders and the stores: reserved keys stay free, indexed fields exist."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubevec.backends.qdrant import ID_FIELD, TEXT_FIELD, QdrantStore
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.documents import INDEXED_FIELDS
from kubevec.inference.instances import build_instance

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"], "categories": ["all"]},
        "scope": "Namespaced",
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
        ],
    },
}
WIDGET: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {
        "name": "w",
        "namespace": "ns",
        "uid": "u-1",
        "labels": {"app": "w"},
        "ownerReferences": [{"kind": "Gadget", "name": "g", "controller": True}],
    },
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},  # objects with a status carry `health`
    "spec": {"template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": []}}},  # `pod_labels`
}


def test_every_indexed_field_is_a_field_documents_carry() -> None:
    """A renamed payload field must not leave a Qdrant server indexing a field nobody writes."""
    carried = set(describe_crd(WIDGET_CRD).to_document().metadata) | set(
        build_instance(WIDGET, plural="widgets").to_document().metadata
    )
    assert set(INDEXED_FIELDS) <= carried, set(INDEXED_FIELDS) - carried


class RecordingClient:
    """Stands in for a server's client: records payload indexes, answers what exists."""

    def __init__(self, existing: Sequence[str]) -> None:
        self.schema = {field: object() for field in existing}
        self.created: list[str] = []

    def get_collection(self, name: str) -> Any:
        return type("Info", (), {"payload_schema": dict(self.schema)})()

    def create_payload_index(self, name: str, *, field_name: str, field_schema: Any) -> None:
        self.created.append(field_name)
        self.schema[field_name] = field_schema


def test_a_qdrant_server_indexes_what_the_caller_names_and_only_what_is_missing() -> None:
    store = QdrantStore(url="http://127.0.0.1:1")  # the server code path; nothing is contacted
    client = RecordingClient(existing=["kind", ID_FIELD])
    store._client = client  # type: ignore[assignment]
    store._ensure_indexes("instances", ("kind", "namespace", "labels"))
    assert client.created == ["namespace", "labels", TEXT_FIELD]
    store._ensure_indexes("instances", ("kind", "namespace", "labels", "owner"))  # a field added later
    assert client.created == ["namespace", "labels", TEXT_FIELD, "owner"]


def test_local_mode_creates_no_payload_indexes() -> None:
    store = QdrantStore()
    client = RecordingClient(existing=[])
    store._client = client  # type: ignore[assignment]
    store._ensure_indexes("instances", INDEXED_FIELDS)
    assert client.created == []
