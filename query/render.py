"""Results for people, for LLM context (compact, within a token budget) and for programs (JSON)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from kubevec.core import fields
from kubevec.query.answers import Result

#: Rough characters per token for English text; only used to stay inside a budget.
CHARS_PER_TOKEN = 4
#: The fields a compact answer shows beside each result's id, in this order.
_SHOWN = (
    fields.KIND,
    fields.GROUP,
    fields.NAMESPACE,
    fields.LABELS,
    fields.OWNER,
    fields.HEALTH,
    fields.HEALTH_REASON,
    fields.HEALTH_MESSAGE,
    fields.CONTAINER_REASONS,
    fields.EXIT_CODES,
    fields.RESTARTS,
    fields.SCOPE,
    fields.CAPABILITY_WORDS,
)


def as_json(results: Sequence[Result]) -> str:
    """The results, with what the answer says besides them (total, truncated, cursor, counts) when it says it."""
    listed = [r.to_json() for r in results]
    meta = getattr(results, "meta", None)
    return json.dumps({"results": listed, **meta()} if meta else listed, indent=2, ensure_ascii=False)


def summary(results: Sequence[Result]) -> str:
    """The line under a compact answer: how many more matched, and how to get them; counts when counted."""
    counts: dict[str, int] | None = getattr(results, "counts", None)
    total: int | None = getattr(results, "total", None)
    if counts is not None:
        shown = ", ".join(f"{value} {count}" for value, count in list(counts.items())[:50])
        more = f" (and {len(counts) - 50} more values)" if len(counts) > 50 else ""
        return f"{total} matched: {shown or 'none'}{more}"
    if total is None or total <= len(results):
        return ""
    cursor: str | None = getattr(results, "cursor", None)
    how = f"; next page: cursor={cursor}" if cursor else "; raise k or narrow the filters to see more"
    return f"Showing {len(results)} of {total}{how}"


def scores(result: Result) -> str:
    """``similar, cosine 0.62`` or, when the order comes from another score, ``similar 0.62, fused 0.95``."""
    if result.similarity is None:
        return f"{result.score_kind} {result.score:.2f}"
    if result.score_kind == "cosine":
        return f"{result.label}, cosine {result.similarity:.2f}"
    return f"{result.label} {result.similarity:.2f}, {result.score_kind} {result.score:.2f}"


DEFAULT_TOKEN_BUDGET = 1500


def compact(results: Sequence[Result], *, token_budget: int | None = DEFAULT_TOKEN_BUDGET) -> str:
    """One block per result, best first; the budget is shared so every result shows, texts cut to fit.

    ``token_budget=None`` shows every text whole (``kubevec search -o wide``).
    """
    footer = summary(results)
    if not results:
        return footer or "No results."
    share = token_budget * CHARS_PER_TOKEN // len(results) if token_budget is not None else sys.maxsize
    blocks: list[str] = []
    for rank, result in enumerate(results, start=1):
        facts = []
        for field in _SHOWN:
            value = field.raw(result.metadata)
            if value in (None, "", []):
                continue
            facts.append(f"{field.name}={','.join(map(str, value)) if isinstance(value, list) else value}")
        head = f"{rank}. {result.id} [{scores(result)}] {' '.join(facts)}"[:share]
        room = share - len(head) - 4
        text = result.text if len(result.text) <= room else result.text[: max(0, room - 4)].rstrip() + " ..."
        blocks.append(f"{head}\n   {text}" if room > 20 else head)
    return "\n".join([*blocks, footer] if footer else blocks)
