"""The held-out report: a group of questions that asks for no facts has no fact recall to print."""

from __future__ import annotations

from typing import Any

from tests.bench.answers import facts_found, scores, share
from tests.bench.held_out import consistent, report


def row(*, ident: str, klass: str, rank: int | None, facts: int, of: int) -> dict[str, Any]:
    return {"id": ident, "class": klass, "namespace": "shop", "rank": rank, "facts": facts, "of": of}


def test_a_group_without_facts_prints_a_dash_not_zero() -> None:
    rows = [
        row(ident="a1", klass="name", rank=1, facts=0, of=0),
        row(ident="a2", klass="name", rank=2, facts=0, of=0),
        row(ident="a3", klass="config", rank=1, facts=1, of=2),
    ]
    assert scores(rows[:2])[3] is None
    assert scores(rows)[3] == 0.5
    by_class = {line.split()[0]: line.split() for line in report(rows, synced=0).splitlines() if line}
    assert by_class["name"][-1] == "-"
    assert by_class["config"][-1] == "0.50"


def test_share_keeps_two_decimals() -> None:
    assert share(0.0) == "0.00"
    assert share(None) == "-"


def test_a_status_with_fewer_replicas_caps_the_counts_the_controller_wrote() -> None:
    """Set 11's quota-blocked Deployment says ``replicas: 0``; the controller had written one updated replica,
    which the API server would refuse beside it."""
    status = {"replicas": 0, "unavailableReplicas": 1}
    written = {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 0}
    assert consistent(status, written=written) == {
        "replicas": 0, "unavailableReplicas": 1, "updatedReplicas": 0, "readyReplicas": 0,
    }  # fmt: skip
    assert consistent({"replicas": 3, "updatedReplicas": 3}, written={"updatedReplicas": 1}) == {
        "replicas": 3, "updatedReplicas": 3,
    }  # fmt: skip


def test_a_fact_with_quotes_is_found_in_a_payload() -> None:
    payload = {"warning_message": 'configmap "tb-config" not found', "container_reasons": ["OOMKilled"]}
    assert facts_found(['configmap "tb-config" not found', "OOMKilled", "absent"], [("Pod web", payload)]) == 2
