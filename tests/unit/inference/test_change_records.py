"""Change records: what one write of an instance document says changed, in one line."""

from __future__ import annotations

import copy
from typing import Any

from kubevec.inference.change_records import Stored, change_record, changed_fields
from kubevec.inference.documents import Document
from kubevec.inference.instances import build_instance

CLUSTER = "prod-eu"


def deployment(
    *, image: str = "ghcr.io/acme/payments-api:2.3.0", ready: int = 3, reason: str | None = None, **labels: str
) -> dict[str, Any]:
    conditions = [{"type": "Available", "status": "True" if ready == 3 else "False"}]
    if reason:
        conditions.append({"type": "Progressing", "status": "False", "reason": reason})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "payments-api",
            "namespace": "prod",
            "uid": "u-1",
            "generation": 4,
            "labels": {"app": "payments", **labels},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "payments"}},
            "template": {"spec": {"containers": [{"name": "api", "image": image}]}},
        },
        "status": {
            "observedGeneration": 4,
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": conditions,
        },
    }


def document(body: dict[str, Any]) -> Document:
    return build_instance(body, plural="deployments", cluster=CLUSTER).to_document()


def stored(body: dict[str, Any]) -> Stored:
    d = document(body)
    return Stored(text=d.text, metadata=d.metadata)


def test_an_image_roll_that_degrades_reads_as_one_line() -> None:
    before = stored(deployment())
    after = stored(deployment(image="ghcr.io/acme/payments-api:2.3.1", ready=1, reason="ProgressDeadlineExceeded"))
    record = change_record(object_id=document(deployment()).id, before=before, after=after, at=1_790_000_000)
    assert record is not None
    assert record.text == (
        "Deployment prod/payments-api: image ghcr.io/acme/payments-api 2.3.0 -> 2.3.1; "
        "health healthy -> degraded (ProgressDeadlineExceeded)"
    )
    meta = record.metadata
    assert (meta["change"], meta["kind"], meta["namespace"], meta["cluster"]) == (
        "updated",
        "Deployment",
        "prod",
        CLUSTER,
    )
    assert meta["fields"] == ["images", "health"]
    assert meta["time"] == 1_790_000_000
    assert meta["at"] == "2026-09-21T14:13:20Z"


def test_status_churn_under_the_same_health_is_no_change() -> None:
    """A new reason, observed generation or timestamp under the same coarse health writes no record."""
    body = deployment(ready=1, reason="ProgressDeadlineExceeded")
    churned = copy.deepcopy(body)
    churned["status"]["conditions"][1]["reason"] = "ReplicaSetUpdated"
    churned["status"]["observedGeneration"] = 5
    assert changed_fields(stored(body), stored(churned)) == []
    assert change_record(object_id=document(body).id, before=stored(body), after=stored(churned)) is None


def test_labels_and_other_fields_say_what_moved() -> None:
    scaled = deployment(tier="api")
    scaled["spec"]["replicas"] = 5
    record = change_record(object_id=document(scaled).id, before=stored(deployment()), after=stored(scaled))
    assert record is not None
    assert "labels +tier=api" in record.text
    assert "replicas 3 -> 5" in record.text


def test_created_and_deleted() -> None:
    body = deployment()
    object_id = document(body).id
    created = change_record(object_id=object_id, before=None, after=stored(body))
    deleted = change_record(object_id=object_id, before=stored(body), after=None)
    assert created is not None
    assert deleted is not None
    assert (
        created.text
        == "Deployment prod/payments-api created: images ghcr.io/acme/payments-api:2.3.0; replicas 3; health healthy"
    )
    assert deleted.text == "Deployment prod/payments-api deleted (was healthy)"
    assert (created.metadata["change"], deleted.metadata["change"]) == ("created", "deleted")
    assert created.id != deleted.id


def test_the_same_change_has_the_same_id() -> None:
    """A flush retried after a store failure writes the same record again, not a second one."""
    before, after = stored(deployment()), stored(deployment(image="ghcr.io/acme/payments-api:2.3.1"))
    object_id = document(deployment()).id
    first = change_record(object_id=object_id, before=before, after=after, at=1.0)
    again = change_record(object_id=object_id, before=before, after=after, at=2.0)
    assert first is not None
    assert again is not None
    assert first.id == again.id


def test_credentials_never_reach_a_summary() -> None:
    """Texts were redacted when built; a summary is redacted again, whatever a field held."""
    before = Stored(
        text="Widget w | namespace: prod | endpoint: https://db.example.com", metadata={"health": "healthy"}
    )
    leaked = "postgres://admin:hunter2-secret@db.example.com:5432/app"
    after = Stored(text=f"Widget w | namespace: prod | endpoint: {leaked}", metadata={"health": "healthy"})
    record = change_record(object_id="c/prod/example.com/v1/Widget/w", before=before, after=after)
    assert record is not None
    assert "hunter2-secret" not in record.text
    assert "hunter2-secret" not in str(record.metadata)


def test_generated_names_are_named_not_redacted() -> None:
    """Found by `make demo`: "ReplicaSet <redacted> created". As part of the sentence, prod/payments-api-5cb4d8b4b4
    read as a token, so every generated name (ReplicaSets, Pods, Jobs) was redacted from its summary."""
    for index in range(200):
        body = deployment()
        body["kind"] = "ReplicaSet"
        suffix = f"{(index * 2654435761) % 16**10:010x}"[:10]
        body["metadata"]["name"] = f"payments-api-{suffix}"
        body["metadata"]["namespace"] = f"team-{(index * 40503) % 16**6:06x}"
        after = build_instance(body, plural="replicasets", cluster=CLUSTER).to_document()
        record = change_record(object_id=after.id, before=None, after=Stored(text=after.text, metadata=after.metadata))
        assert record is not None
        assert record.text.startswith(f"ReplicaSet {body['metadata']['namespace']}/payments-api-{suffix} created"), (
            record.text
        )


def test_a_credential_shaped_name_is_still_redacted() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    record = change_record(
        object_id=f"c/prod/core/v1/ConfigMap/{token}",
        before=None,
        after=Stored(text="ConfigMap x | namespace: prod", metadata={}),
    )
    assert record is not None
    assert token not in record.text
    assert record.text.startswith("ConfigMap prod/<redacted> created")
