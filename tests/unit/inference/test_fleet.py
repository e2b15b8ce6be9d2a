"""Shared capability records: parts, the record's id and payload, and one cluster's reading of it."""

from __future__ import annotations

import pytest

from kubevec.inference.fleet import Part, is_shared, part_of, parts_of, project, resource_of, share, shared_id
from tests.fleet import operator_crds


def test_a_part_survives_its_encoding() -> None:
    part = Part(
        cluster="prod-eu.1",
        api_version="cert-manager.io/v1",
        version="v1",
        served_versions=("v1", "v1beta1"),
        content_hash="a" * 64,
        built_from="uid/3/1/0.1.0/abc",
    )
    assert Part.decode(part.encode()) == part
    assert Part.decode(Part(**{**part.__dict__, "built_from": ""}).encode()).built_from == ""  # type: ignore[arg-type]
    assert Part.decode("not a part") is None


def test_clusters_with_the_same_text_share_one_record_with_each_clusters_versions() -> None:
    east = operator_crds(cluster="east")["widget15s.fleet.example.com"]
    west = operator_crds(cluster="west")["widget15s.fleet.example.com"]
    assert east.text == west.text
    assert east.content_hash != west.content_hash
    record = share(resource=east.id, text=east.text, base=east.metadata, parts=[part_of(west), part_of(east)])
    assert record.id == shared_id(east.id, east.text_hash)
    assert is_shared(record.id)
    assert resource_of(record.id) == east.id
    meta = record.metadata
    assert meta["cluster"] == ["east", "west"]  # sorted: the hash depends on what the record says alone
    assert meta["api_version"] == ["fleet.example.com/v1", "fleet.example.com/v2"]
    assert meta["served_versions"] == ["v1", "v2"]
    assert meta["served_by"] == ["east=fleet.example.com/v1 (v1)", "west=fleet.example.com/v2 (v1, v2)"]
    assert [p.cluster for p in parts_of(meta)] == ["east", "west"]
    again = share(resource=east.id, text=east.text, base=meta, parts=parts_of(meta))
    assert again.content_hash == record.content_hash  # rebuilt from the stored payload: the same record


def test_a_record_reads_as_the_asked_clusters() -> None:
    east, west = (operator_crds(cluster=c)["widget15s.fleet.example.com"] for c in ("east", "west"))
    meta = share(resource=east.id, text=east.text, base=east.metadata, parts=[part_of(east), part_of(west)]).metadata
    as_west = project(meta, cluster="west")
    assert as_west["cluster"] == "west"
    assert as_west["api_version"] == "fleet.example.com/v2"
    assert as_west["served_versions"] == ["v1", "v2"]
    assert "parts" not in as_west
    assert "served_by" not in as_west
    everyone = project(meta)
    assert everyone["cluster"] == ["east", "west"]
    assert "served_by" in everyone
    assert "parts" not in everyone
    alone = share(resource=east.id, text=east.text, base=east.metadata, parts=[part_of(east)]).metadata
    assert project(alone)["api_version"] == "fleet.example.com/v1"  # one cluster: its scalars, as before sharing


def test_a_record_needs_a_part() -> None:
    east = operator_crds(cluster="east", count=1)["widget0s.fleet.example.com"]
    with pytest.raises(ValueError, match="at least one part"):
        share(resource=east.id, text=east.text, base=east.metadata, parts=[])


def test_part_hashes_are_not_redacted() -> None:
    """The hashes read as random tokens to the value redactor: bookkeeping is stamped past it."""
    east = operator_crds(cluster="east", count=1)["widget0s.fleet.example.com"]
    record = share(resource=east.id, text=east.text, base=east.metadata, parts=[part_of(east)])
    assert parts_of(record.metadata)[0].content_hash == east.content_hash
