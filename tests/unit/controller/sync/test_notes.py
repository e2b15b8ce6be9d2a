"""Workload notes: one LLM question per template, asked in the background, its objects rebuilt with the answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.documents import DocumentBuilder, Unchanged
from kubevec.controller.sync.notes import Described, WorkloadNotes
from kubevec.inference.bodies import as_body
from kubevec.inference.documents import INSTANCES, Document
from kubevec.inference.instances import InstancePolicy
from kubevec.inference.providers.config import LLMSettings
from kubevec.inference.providers.llm import LLMDescriber

POLICY = InstancePolicy()


def deployment(name: str, *, uid: str, namespace: str = "obs", image: str = "jaegertracing/jaeger-query:1.57") -> Any:
    return as_body(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": "5"},
            "spec": {"template": {"spec": {"containers": [{"name": "query", "image": image}]}}},
        }
    )


class ScriptedLLM:
    """An OpenAI-compatible chat endpoint (httpx.MockTransport) answering each question with ``answer``."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.questions: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.questions.append(json.loads(request.content)["messages"][1]["content"])
        if self.answer is None:
            return httpx.Response(503, json={"error": "overloaded"})
        content = json.dumps({"software": self.answer})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})


def describer(tmp_path: Path, llm: ScriptedLLM) -> LLMDescriber:
    return LLMDescriber(
        provider="openai",
        url="http://llm.test/v1",
        model="m",
        api_key="k",
        cache_dir=tmp_path,
        requests_per_minute=6000,
        transport=httpx.MockTransport(llm),
    )


async def _drain(notes: WorkloadNotes, *, seconds: float = 0.2) -> None:
    task = asyncio.create_task(notes.run())
    await asyncio.sleep(seconds)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def test_one_question_per_template_and_its_objects_come_back(tmp_path: Path) -> None:
    """The same workload in two namespaces (staging and prod copies of an app) is one question."""
    llm = ScriptedLLM("Jaeger query: the web UI for searching traces.")
    noted: list[list[Described]] = []
    notes = WorkloadNotes(describer=describer(tmp_path, llm), on_noted=noted.append)
    builder = DocumentBuilder(cluster="c", metrics=Metrics())
    builder.notes = notes
    first = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    builder.instance(deployment("a", uid="u-b", namespace="staging"), plural="deployments", policy=POLICY)
    builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)  # a second event
    assert isinstance(first, Document)
    assert "does:" not in first.text
    assert notes.pending == 1
    await _drain(notes)
    assert len(llm.questions) == 1
    assert [[d.namespace for d in batch] for batch in noted] == [["obs", "staging"]]
    again = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    assert isinstance(again, Document)
    assert "does: Jaeger query: the web UI for searching traces." in again.text
    assert notes.pending == 0


async def test_a_restart_finds_the_note_cached_and_asks_nothing(tmp_path: Path) -> None:
    llm = ScriptedLLM("Jaeger query: the web UI for searching traces.")
    notes = WorkloadNotes(describer=describer(tmp_path, llm), on_noted=lambda _: None)
    builder = DocumentBuilder(cluster="c", metrics=Metrics())
    builder.notes = notes
    builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    await _drain(notes)
    before = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    restarted = WorkloadNotes(describer=describer(tmp_path, llm), on_noted=lambda _: None)
    builder = DocumentBuilder(cluster="c", metrics=Metrics())
    builder.notes = restarted
    after = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    assert isinstance(before, Document)
    assert isinstance(after, Document)
    assert after.text == before.text  # the same text: the stored vector is kept
    assert restarted.pending == 0
    assert len(llm.questions) == 1


async def test_an_unknown_answer_or_a_failure_adds_nothing_and_is_not_asked_again_at_once(tmp_path: Path) -> None:
    unknown = ScriptedLLM("unknown")
    notes = WorkloadNotes(describer=describer(tmp_path / "u", unknown), on_noted=lambda _: None)
    builder = DocumentBuilder(cluster="c", metrics=Metrics())
    builder.notes = notes
    builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    await _drain(notes)
    built = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    assert isinstance(built, Document)
    assert "does:" not in built.text
    assert notes.pending == 0
    assert len(unknown.questions) == 1

    down = ScriptedLLM(None)
    notes = WorkloadNotes(describer=describer(tmp_path / "d", down), on_noted=lambda _: None)
    builder.notes = notes
    builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    await _drain(notes)
    builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)  # the next resync
    assert notes.pending == 0
    assert len(down.questions) == 1


async def test_a_document_built_before_its_note_is_built_again_until_the_note_is_in(tmp_path: Path) -> None:
    """Its ``built_from`` says pending: the refetch, a resync or a restart after a kill builds it again;
    once the note is in, the object is unchanged again. Turning notes on builds every object once."""
    stored: dict[str, str] = {}

    def store(document: Any) -> None:
        assert isinstance(document, Document)
        stored[document.id] = str(document.metadata["built_from"])

    builder = DocumentBuilder(
        cluster="c",
        metrics=Metrics(),
        built_from=lambda collection, key: stored.get(key) if collection == INSTANCES else None,
    )
    store(builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY))
    assert isinstance(builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY), Unchanged)

    llm = ScriptedLLM("Jaeger query: the web UI for searching traces.")
    builder.notes = WorkloadNotes(describer=describer(tmp_path, llm), on_noted=lambda _: None)
    first = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)  # notes turned on
    store(first)
    assert stored[first.id].endswith("/pending")  # type: ignore[union-attr]
    again = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    assert isinstance(again, Document)  # still pending: built again (the question is asked once)
    await _drain(builder.notes)
    noted = builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY)
    store(noted)
    assert "does:" in noted.text  # type: ignore[union-attr]
    assert not stored[noted.id].endswith("/pending")  # type: ignore[union-attr]
    assert isinstance(builder.instance(deployment("a", uid="u-a"), plural="deployments", policy=POLICY), Unchanged)
    assert len(llm.questions) == 1


def test_workload_notes_need_the_describer_on() -> None:
    with pytest.raises(ValueError, match="workloads=true needs enabled=true"):
        LLMSettings(workloads=True)
    assert LLMSettings(workloads=True, enabled=True, api_key="k").workloads
