"""What an LLM is told about a workload (its template's facts, after the gate), and where its answer goes."""

from __future__ import annotations

import copy
from typing import Any

from kubevec.inference.bodies import as_body
from kubevec.inference.instances import build_instance
from kubevec.inference.instances.workloads import template_facts
from kubevec.inference.redaction import redact_object

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def deployment(**overrides: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "tracing-query",
            "namespace": "observability",
            "uid": "u-1",
            "labels": {"app.kubernetes.io/name": "jaeger", "app.kubernetes.io/component": "query", "team": "sre"},
            "annotations": {"description": f"query UI, token {TOKEN}"},
        },
        "spec": {
            "replicas": 2,
            "template": {
                "metadata": {"labels": {"app": "jaeger-query", "pod-template-hash": "7d9f8c6b5"}},
                "spec": {
                    "containers": [
                        {
                            "name": "query",
                            "image": "jaegertracing/jaeger-query:1.57",
                            "ports": [{"containerPort": 16686, "name": "http"}, {"containerPort": 16687}],
                            "env": [{"name": "GITHUB_TOKEN", "value": TOKEN}],
                            "args": ["--query.base-path=/jaeger", f"--token={TOKEN}"],
                        }
                    ]
                },
            },
        },
    }
    obj.update(overrides)
    return obj


def facts_of(obj: dict[str, Any]) -> str | None:
    return template_facts(redact_object(as_body(obj)).obj)


def test_the_facts_name_the_software_and_nothing_else() -> None:
    facts = facts_of(deployment())
    assert facts is not None
    assert facts.splitlines() == [
        "kind: Deployment",
        "name: tracing-query",
        "labels: app=jaeger-query, app.kubernetes.io/component=query, app.kubernetes.io/name=jaeger",
        "container query: image jaegertracing/jaeger-query:1.57, ports 16686/http, 16687",
    ]
    assert TOKEN not in facts
    assert "GITHUB_TOKEN" not in facts
    assert "base-path" not in facts
    assert "team" not in facts
    assert "pod-template-hash" not in facts


def test_replicas_env_values_and_annotations_do_not_change_the_facts() -> None:
    """One question per template: scaling, a new env value or a new annotation asks nothing again."""
    other = deployment()
    other["spec"] = copy.deepcopy(other["spec"])
    other["spec"]["replicas"] = 7
    other["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = "something-else"
    other["metadata"] = {**other["metadata"], "annotations": {}, "uid": "u-2"}
    assert facts_of(other) == facts_of(deployment())


def test_only_what_owns_a_template_or_stands_alone_is_described() -> None:
    pod_spec = {"containers": [{"name": "web", "image": "nginx:1.27"}]}
    owned = {"name": "web-1", "ownerReferences": [{"kind": "ReplicaSet", "name": "web-7d9f", "controller": True}]}
    assert facts_of({"apiVersion": "v1", "kind": "Pod", "metadata": owned, "spec": pod_spec}) is None
    assert facts_of({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debug"}, "spec": pod_spec}) is not None
    assert facts_of({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {}}) is None
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "backup"},
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "restic"}]}}}}},
    }
    assert "image restic" in (facts_of(cronjob) or "")
    assert facts_of(deployment(spec={"template": {"spec": {"containers": []}}})) is None


def test_the_note_is_a_does_line_and_the_template_is_said() -> None:
    asked: list[str] = []

    def notes(facts: str) -> str | None:
        asked.append(facts)
        return "Jaeger's query service: the web UI for searching traces."

    built = build_instance(as_body(deployment()), plural="deployments", notes=notes)
    assert asked == [built.template]
    assert built.note is not None
    assert "does: Jaeger's query service: the web UI for searching traces." in built.text
    assert built.text.index("does:") < built.text.index("images:")  # early: a small model reads the start


def test_an_unanswered_template_builds_without_a_line_and_says_what_to_ask() -> None:
    built = build_instance(as_body(deployment()), plural="deployments", notes=lambda _: None)
    assert built.note is None
    assert built.template is not None
    assert "does:" not in built.text
    assert build_instance(as_body(deployment()), plural="deployments").text == built.text  # notes off: the same
    assert build_instance(as_body(deployment()), plural="deployments").template is None


def test_the_note_is_judged_like_any_text() -> None:
    built = build_instance(as_body(deployment()), plural="deployments", notes=lambda _: f"uses the token {TOKEN}")
    assert TOKEN not in built.text
