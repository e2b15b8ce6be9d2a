"""The payload field registry (``core/fields.py``) is the truth about payloads: every field a builder
writes is registered with the type it is written with, and what is derived from it (indexed fields,
``count_by`` choices, facet help, the docs table) follows it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubevec.core import fields
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.change_records import Stored, change_record
from kubevec.inference.documents import INDEXED_FIELDS, Document
from kubevec.inference.fleet import part_of, share
from kubevec.inference.instances import build_instance
from kubevec.query.request import SearchRequest

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "bench" / "apps"


def _bodies() -> Iterator[Mapping[str, Any]]:
    for path in sorted(APPS.rglob("*.yaml")):
        for body in yaml.safe_load_all(path.read_text()):
            if isinstance(body, Mapping) and "kind" in body:
                yield from (body["items"] if isinstance(body.get("items"), list) else [body])


#: Objects with a status (the bench manifests have none): a failing Pod, a stuck Deployment, a quota.
WITH_STATUS: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "api-1", "namespace": "shop", "uid": "u-1", "labels": {"app": "api"}},
        "spec": {"nodeName": "node-a", "containers": [{"name": "api", "image": "ghcr.io/acme/api:1"}]},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.7",
            "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [
                {
                    "name": "api",
                    "ready": False,
                    "restartCount": 4,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off restarting"}},
                    "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
                }
            ],
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "shop", "uid": "u-2", "generation": 2},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "api", "image": "api:1"}]}}},
        "status": {
            "observedGeneration": 2,
            "replicas": 2,
            "conditions": [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "too slow"}
            ],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "shop", "uid": "u-3"},
        "status": {"hard": {"pods": "10"}, "used": {"pods": "3"}},
    },
]


def _plural(kind: str) -> str:
    return kind.lower() + ("es" if kind.lower().endswith("s") else "s")


def _documents() -> list[Document]:
    out: list[Document] = []
    for body in [*_bodies(), *WITH_STATUS]:
        kind = str(body["kind"])
        if kind == "CustomResourceDefinition":
            out.append(describe_crd(body).to_document())
        else:
            out.append(build_instance(body, plural=_plural(kind)).to_document())
    return out


@pytest.fixture(scope="module")
def documents() -> list[Document]:
    built = _documents()
    assert len(built) > 200  # the bench applications: every kind they hold
    return built


def _check(field: fields.Field, value: Any, *, shared: bool = False) -> None:
    if shared and field.shared_list and isinstance(value, list):
        assert all(isinstance(item, str) for item in value), (field.name, value)
        return
    if isinstance(field, fields.Texts):
        assert isinstance(value, list), (field.name, value)
        assert all(isinstance(item, str) for item in value), (field.name, value)
    elif isinstance(field, fields.Text):
        assert isinstance(value, str), (field.name, value)
    elif isinstance(field, fields.Number):
        assert isinstance(value, int | float), (field.name, value)
        assert not isinstance(value, bool), (field.name, value)
    elif isinstance(field, fields.Flag):
        assert isinstance(value, bool), (field.name, value)


def test_every_field_a_builder_writes_is_registered_with_its_type(documents: list[Document]) -> None:
    seen: set[str] = set()
    for document in documents:
        for name, value in document.metadata.items():
            field = fields.named(name)
            assert field is not None, f"{name} (on {document.id}) is not in core/fields.py"
            assert document.collection in field.collections, (name, document.collection)
            _check(field, value)
            seen.add(name)
    # the material carries the fields a reader leans on most
    assert {"kind", "namespace", "labels", "images", "refs", "health", "role", "subjects", "selector"} <= seen
    assert {"container_reasons", "exit_codes", "restarts", "node", "pod_ip", "health_reason", "quota_hard"} <= seen


def test_shared_capability_records_and_change_records_are_registered(documents: list[Document]) -> None:
    capability = next(d for d in documents if d.collection == "capabilities")
    other = Document(
        id=capability.id,
        collection="capabilities",
        text=capability.text,
        metadata={**capability.metadata, "cluster": "prod"},
    )
    shared = share(
        resource=str(capability.metadata["resource"]),
        text=capability.text,
        base=capability.metadata,
        parts=[part_of(capability), part_of(other)],
    )
    for name, value in shared.metadata.items():
        field = fields.named(name)
        assert field is not None, name
        _check(field, value, shared=True)

    instance = next(d for d in documents if d.collection == "instances" and "health" in d.metadata)
    before = Stored(text=instance.text, metadata=instance.metadata)
    after = Stored(text=instance.text + " | replicas: 9", metadata={**instance.metadata, "health": "degraded"})
    record = change_record(object_id=instance.id, before=before, after=after, at=1.0)
    assert record is not None
    for name, value in record.metadata.items():
        field = fields.named(name)
        assert field is not None, name
        assert "changes" in field.collections, name
        _check(field, value)


def test_stores_index_exactly_the_registered_indexed_fields() -> None:
    assert fields.indexed() == INDEXED_FIELDS
    assert INDEXED_FIELDS[:3] == ("cluster", "kind", "group")  # the order stores were first given


def test_count_by_accepts_the_countable_fields_and_nothing_else() -> None:
    schema = SearchRequest.model_json_schema()["properties"]["count_by"]
    choices = next(option["enum"] for option in schema["anyOf"] if "enum" in option)
    assert tuple(choices) == fields.countable()
    SearchRequest.build(collection="instances", count_by="container_reasons", filter={"kind": "Pod"})
    with pytest.raises(Exception, match="count_by"):
        SearchRequest.build(collection="instances", count_by="uid")


def test_every_countable_or_facet_field_is_one_builders_write() -> None:
    for name, field in fields.REGISTRY.items():
        if field.countable or field.facet or field.indexed:
            assert field.collections, name


def test_the_docs_table_is_the_registry() -> None:
    text = (ROOT / "docs" / "searching.md").read_text()
    start, end = text.index("<!-- fields:start -->\n"), text.index("<!-- fields:end -->")
    assert text[start + len("<!-- fields:start -->\n") : end].strip() == fields.table(), (
        "docs/searching.md's field table is stale: paste kubevec.core.fields.table() between the markers"
    )


def test_text_and_list_readers_read_what_is_stored_and_nothing_else() -> None:
    payload: dict[str, Any] = {"kind": "Pod", "labels": ["app=web"], "restarts": 3, "images": "nginx"}
    assert fields.KIND.of(payload) == "Pod"
    assert fields.NAMESPACE.of(payload) == ""
    assert fields.LABELS.of(payload) == ["app=web"]
    assert fields.IMAGES.of(payload) == ["nginx"]  # a scalar reads as a list of one
    assert fields.SUBJECTS.of(payload) == []
    assert fields.RESTARTS.of(payload) == 3
    assert fields.TIME.of(payload) is None
    assert fields.RESTARTS.of({"restarts": True}) is None  # a bool is not a number here


async def test_a_countable_field_reaches_the_mcp_tool_and_the_cli_from_its_entry_alone() -> None:
    """A new countable field is its registry entry and its builder: ``count_by``'s choices in the MCP tool
    and on ``kubevec search --count-by`` are the registry's, in its order."""
    from kubevec.controller.cli.parser import build_parser
    from kubevec.query.mcp import build_server
    from tests.unit.tenants import index

    service, _ = await index()
    listed = {tool.name: tool for tool in await build_server(service.scoped).list_tools()}
    option = listed["vector_search"].input_schema["properties"]["count_by"]
    assert next(o["enum"] for o in option["anyOf"] if "enum" in o) == list(fields.countable())

    search = build_parser().subcommands["search"]
    count_by = next(action for action in search.recorded if "--count-by" in action.option_strings)
    assert tuple(count_by.choices or ()) == fields.countable()
