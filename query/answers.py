"""What a search answers: ranked results with their scores and labels, and what the answer says of itself."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

VERY_SIMILAR: Final = 0.70
SIMILAR: Final = 0.50


@dataclasses.dataclass(frozen=True, kw_only=True)
class Result:
    id: str
    score: float
    label: str
    metadata: Mapping[str, Any]
    text: str
    score_kind: str = "cosine"
    similarity: float | None = None

    @property
    def relevance(self) -> float:
        """What labels and ``min_score`` use: the similarity to the query, else the score."""
        return self.score if self.similarity is None else self.similarity

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": round(self.score, 4),
            "score_kind": self.score_kind,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "label": self.label,
            "metadata": dict(sorted(self.metadata.items())),  # one order, whichever path read the record
            "text": self.text,
        }


def label_for(score: float) -> str:
    if score >= VERY_SIMILAR:
        return "very similar"
    return "similar" if score >= SIMILAR else "somewhat related"


def make_result(
    id: str, score: float, text: str, metadata: Mapping[str, Any], *, kind: str, similarity: float | None = None
) -> Result:
    return Result(
        id=id,
        score=score,
        label=label_for(score if similarity is None else similarity),
        metadata=metadata,
        text=text,
        score_kind=kind,
        similarity=similarity,
    )


class Answer(list[Result]):
    """A search's results, and ``degraded``: why they are not what was asked for (None when they are).

    When the embedder cannot answer, a question is answered from its words alone (BM25 over the same
    view and filters) rather than not at all; ``degraded`` says so, for the CLI's warning and the
    MCP tool's ``degraded`` field.
    """

    degraded: str | None = None
    #: What matched and the caller may see: exact for filters and keywords, the candidates ranked for a question.
    total: int | None = None
    #: The next page of a filter-only listing (pass it back as ``cursor``); None on the last page.
    cursor: str | None = None
    #: ``count_by``: matches per value of the field (no documents are returned then).
    counts: dict[str, int] | None = None

    @property
    def truncated(self) -> bool:
        """More matched than this answer shows."""
        return self.total is not None and self.total > len(self)

    @classmethod
    def of(
        cls,
        results: Iterable[Result],
        *,
        degraded: str | None = None,
        total: int | None = None,
        cursor: str | None = None,
        counts: dict[str, int] | None = None,
    ) -> Answer:
        answer = cls(results)
        answer.degraded, answer.total, answer.cursor, answer.counts = degraded, total, cursor, counts
        return answer

    def meta(self) -> dict[str, Any]:
        """What a JSON answer carries besides its results."""
        out: dict[str, Any] = {"total": self.total, "truncated": self.truncated, "cursor": self.cursor}
        if self.counts is not None:
            out["counts"] = self.counts
        if self.degraded is not None:
            out["degraded"] = self.degraded
        return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a)) or 1.0
    nb = math.sqrt(sum(y * y for y in b)) or 1.0
    return dot / (na * nb)
