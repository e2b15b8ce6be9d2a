"""A candidate's trouble as a question about trouble reads it: its health, its reasons, its warnings."""

from __future__ import annotations

from kubevec.query.trouble import health_of, says_why
from tests.unit.query.test_intent import read

PENDING = {"kind": "PersistentVolumeClaim", "name": "data-0", "namespace": "db", "health": "progressing",
           "health_reason": "Pending"}  # fmt: skip
FAILED = {**PENDING, "name": "backup", "warning_reason": "ProvisioningFailed",
          "warning_message": 'storageclass.storage.k8s.io "premium" not found'}  # fmt: skip


def test_a_warning_that_something_failed_makes_a_progressing_object_degraded() -> None:
    assert health_of(PENDING) == "progressing"
    assert health_of(FAILED) == "degraded"
    assert health_of({**FAILED, "health": "healthy"}) == "healthy"  # what its status says since stands


def test_a_stuck_claim_with_a_failure_ranks_above_one_merely_pending() -> None:
    stuck = read("Which claim is stuck Pending in db?")
    assert stuck.boost(FAILED) > stuck.boost(PENDING)


def test_the_reasons_and_the_warning_say_why_in_the_questions_words() -> None:
    assert says_why(FAILED, words={"provisioning"})
    assert says_why(FAILED, words={"storageclass"})
    assert says_why({"container_reasons": ["OOMKilled"]}, words={"memory"})
    assert not says_why(PENDING, words={"memory"})


def test_a_question_for_warning_events_is_about_trouble_and_wants_the_objects_warned() -> None:
    asked = read("Which Warning events were recorded in namespace db, and for which objects?")
    assert asked.trouble
    assert says_why(FAILED, words={"warning", "events"})
    assert not says_why(PENDING, words={"warning", "events"})  # nothing was recorded for it
    assert asked.boost(FAILED) > asked.boost({**PENDING, "health": "degraded"})
