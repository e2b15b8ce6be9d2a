"""Retrieval quality of a search service on judged questions: recall@1, recall@5, MRR and latency.

What ``kubevec bench retrieval`` reports for whatever embedder and reranker are configured, so a
team can compare models on its own CRDs and questions before switching (``kubevec migrate``). A
questions file is JSON Lines, one ``{"query": "...", "expected": ["<capability id>", ...]}`` per line,
as ``queries.jsonl`` beside the shared CRD corpus.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kubevec.core import fields
from kubevec.core.errors import SearchError
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService


@dataclasses.dataclass(frozen=True)
class Judged:
    """A question and the capability documents that answer it."""

    query: str
    expected: tuple[str, ...]


@dataclasses.dataclass
class Scores:
    queries: int
    recall_at_1: float
    recall_at_5: float
    mrr: float
    p50_ms: float
    p95_ms: float
    degraded: int = 0
    #: Questions whose answer was not in the top 5: (question, what came first).
    misses: list[tuple[str, list[str]]] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["misses"] = [{"query": q, "top": top} for q, top in self.misses]
        return out


def read_questions(path: Path) -> list[Judged]:
    """The questions of a JSON Lines file; a bad line is an error naming the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SearchError(f"Cannot read the questions file {path}: {exc.strerror or exc}") from None
    questions: list[Judged] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SearchError(f"{path}:{number}: not JSON ({exc.msg})") from None
        query, expected = (item.get("query"), item.get("expected")) if isinstance(item, dict) else (None, None)
        if not isinstance(query, str) or not query.strip():
            raise SearchError(f'{path}:{number}: needs "query", a non-empty string')
        if not isinstance(expected, list) or not expected or not all(isinstance(e, str) for e in expected):
            raise SearchError(f'{path}:{number}: needs "expected", a list of capability ids')
        questions.append(Judged(query=query, expected=tuple(expected)))
    if not questions:
        raise SearchError(f"{path} holds no questions")
    return questions


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else 0.0


async def evaluate(
    service: SearchService,
    questions: Sequence[Judged],
    *,
    collection: str = "capabilities",
    hybrid: bool = True,
    rerank: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Scores:
    """Ask each question once, as an agent would (top 10), and score where the first expected id came."""
    hits_1 = hits_5 = 0
    reciprocal = 0.0
    timings: list[float] = []
    degraded = 0
    misses: list[tuple[str, list[str]]] = []
    for done, question in enumerate(questions, start=1):
        request = SearchRequest.build(collection=collection, query=question.query, k=10, hybrid=hybrid, rerank=rerank)
        started = time.perf_counter()
        answer = await service.search(request)
        timings.append((time.perf_counter() - started) * 1000)
        degraded += answer.degraded is not None
        ids = [str(fields.RESOURCE.raw(result.metadata, result.id)) for result in answer]  # a type by plural.group
        ranks = [rank for rank, found in enumerate(ids, start=1) if found in question.expected]
        best = ranks[0] if ranks else None
        hits_1 += best == 1
        hits_5 += best is not None and best <= 5
        reciprocal += 1 / best if best else 0.0
        if best is None or best > 5:
            misses.append((question.query, ids[:3]))
        if progress is not None:
            progress(done, len(questions))
    n = len(questions)
    return Scores(
        queries=n,
        recall_at_1=hits_1 / n,
        recall_at_5=hits_5 / n,
        mrr=reciprocal / n,
        p50_ms=_percentile(timings, 0.5),
        p95_ms=_percentile(timings, 0.95),
        degraded=degraded,
        misses=misses,
    )
