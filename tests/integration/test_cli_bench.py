"""`kubevec bench retrieval`: the configured embedder and reranker scored on judged questions, as a team would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_CRDS
from tests.doubles.model_servers import KEY, StandIn, in_a_thread

pytestmark = pytest.mark.integration
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))
QUESTIONS = [
    {
        "query": "restore a deleted namespace from last night's backup",
        "expected": ["backupschedules.backup.samples.kubevec.io"],
    },
    {"query": "autoscale on queue length", "expected": ["queuescalers.autoscaling.samples.kubevec.io"]},
]


def bench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBEVEC, "bench", "retrieval", *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return path


def test_the_packaged_model_on_the_sample_crds(questions: Path) -> None:
    env = {**os.environ, "KUBEVEC_LOG_LEVEL": "WARNING"}
    done = bench("--crds", str(SAMPLE_CRDS), "--queries", str(questions), "-o", "json", env=env)
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)
    assert scores["embedder"] == "all-MiniLM-L6-v2-int8"
    assert (scores["documents"], scores["queries"]) == (7, 2)
    assert scores["recall_at_5"] == 1.0
    assert 0.5 <= scores["mrr"] <= 1.0
    assert scores["p50_ms"] > 0
    assert "Asked 2/2 questions" in done.stderr  # progress, on stderr
    text = bench("--crds", str(SAMPLE_CRDS), "--queries", str(questions), env=env)
    assert "recall@5   1.000" in text.stdout


def test_any_configured_embedder_and_reranker(questions: Path, tmp_path: Path) -> None:
    with in_a_thread(StandIn(dialect="openai")) as embed, in_a_thread(StandIn(dialect="cohere-rerank")) as rerank:
        env = {
            **os.environ,
            "KUBEVEC_LOG_LEVEL": "WARNING",
            "KUBEVEC_EMBEDDER__PROVIDER": "openai",
            "KUBEVEC_EMBEDDER__MODEL": "bge-small-en-v1.5",
            "KUBEVEC_EMBEDDER__BASE_URL": embed.url,
            "KUBEVEC_EMBEDDER__API_KEY": KEY,
            "KUBEVEC_EMBEDDER__DIMENSION": str(embed.dimension),
            "KUBEVEC_RERANKER__PROVIDER": "cohere",
            "KUBEVEC_RERANKER__BASE_URL": rerank.url,
            "KUBEVEC_RERANKER__API_KEY": KEY,
        }
        done = bench("--crds", str(SAMPLE_CRDS), "--queries", str(questions), "-o", "json", env=env)
        assert done.returncode == 0, done.stderr
        scores = json.loads(done.stdout)
        assert (scores["embedder"], scores["reranker"]) == ("openai:bge-small-en-v1.5", "cohere:rerank-v3.5")
        assert [q["query"] for q in QUESTIONS] == embed.texts[-2:]  # each question embedded by the server
        assert len(rerank.received) == 2  # and reranked by the other
        plain = bench("--crds", str(SAMPLE_CRDS), "--queries", str(questions), "--no-rerank", "-o", "json", env=env)
        assert json.loads(plain.stdout)["reranker"] is None
        assert len(rerank.received) == 2


def test_a_bad_questions_file_is_one_line_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "ok", "expected": ["a"]}\n{"query": "no answers"}\n', encoding="utf-8")
    done = bench("--crds", str(SAMPLE_CRDS), "--queries", str(path), env={**os.environ})
    assert done.returncode == 1
    assert done.stderr.strip() == f'kubevec bench: {path}:2: needs "expected", a list of capability ids'
