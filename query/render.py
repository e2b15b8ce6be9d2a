"""Results for people, for LLM context (compact, within a token budget) and for programs (JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from query.search import Result

#: Rough characters per token for English text; only used to stay inside a budget.
CHARS_PER_TOKEN = 4
_SHOWN = ("kind", "group", "namespace", "labels", "owner", "scope", "capabilities")


def as_json(results: Sequence[Result]) -> str:
    return json.dumps([r.to_json() for r in results], indent=2, ensure_ascii=False)


def compact(results: Sequence[Result], *, token_budget: int = 1500) -> str:
    """One block per result, best first, cut to the budget (the last block shortened, never split mid-line)."""
    budget = token_budget * CHARS_PER_TOKEN
    blocks: list[str] = []
    for rank, result in enumerate(results, start=1):
        facts = []
        for key in _SHOWN:
            value = result.metadata.get(key)
            if value in (None, "", []):
                continue
            facts.append(f"{key}={','.join(map(str, value)) if isinstance(value, list) else value}")
        head = f"{rank}. {result.id} [{result.label}, {result.score:.2f}] {' '.join(facts)}"
        block = f"{head}\n   {result.text}"
        if len(block) > budget:
            block = head if len(head) <= budget else ""
            if not block:
                break
            block += "\n   " + result.text[: max(0, budget - len(head) - 8)] + " ..." if budget - len(head) > 40 else ""
        blocks.append(block)
        budget -= len(block) + 1
        if budget <= 0:
            break
    return "\n".join(blocks) if blocks else "No results."
