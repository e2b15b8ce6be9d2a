"""An audit trail: one record per tool call, saying who asked which tool what, and what came of it.

Operators are asked who read what from the index. Each MCP tool call (``ScopedSearch.read``, the one
path every tool goes through) makes one :class:`AuditRecord`: time, the caller's kind and name, the
tool, its arguments (filters, ids, kinds, namespaces, ``k``), how many results, how long it took, and
whether it answered, answered degraded or failed (and why). It is logged by ``kubevec.audit`` at INFO,
one line for people and the fields under ``audit`` for a JSON log pipeline, and given to the tracing
hook as an event on the call's span.

The question's own words (``query``, ``keyword``) are left out unless asked for
(``KUBEVEC_MCP_AUDIT_QUERIES``): they say what a team is working on. Every string that is kept passes
the value redactor, as every log line does.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel

from kubevec.inference.redaction import redact_text
from kubevec.query.views import View

logger = logging.getLogger("kubevec.audit")

#: Arguments that are the caller's own words: kept only when queries are audited.
WORDS: Final = frozenset({"query", "keyword"})
#: The longest argument value kept (a filter can be long).
MAX_VALUE: Final = 300

Outcome = Literal["answered", "degraded", "error"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class AuditRecord:
    time: str
    caller_kind: str
    caller: str
    tool: str
    arguments: Mapping[str, str]
    results: int | None
    milliseconds: float
    outcome: Outcome
    reason: str = ""

    def fields(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "caller_kind": self.caller_kind,
            "caller": self.caller,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "results": self.results,
            "ms": round(self.milliseconds, 1),
            "outcome": self.outcome,
            **({"reason": self.reason} if self.reason else {}),
        }


class AuditTrail:
    """Makes and hands on the records; ``span_event`` puts each on the current trace span (the controller's)."""

    def __init__(
        self,
        *,
        queries: bool = False,
        span_event: Callable[[str, Mapping[str, str | int | float]], None] | None = None,
    ) -> None:
        self.queries = queries
        self._span_event = span_event

    def called(
        self,
        *,
        tool: str,
        view: View | None,
        request: object,
        answer: object,
        seconds: float,
        error: BaseException | None,
    ) -> AuditRecord:
        caller_kind, caller = (view.caller.kind, view.caller.name) if view is not None else ("local", "")
        outcome: Outcome = (
            "error" if error is not None else "degraded" if getattr(answer, "degraded", None) else "answered"
        )
        record = AuditRecord(
            time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            caller_kind=caller_kind,
            caller=caller,
            tool=tool,
            arguments=self._arguments(request),
            results=None if error is not None else results_of(answer),
            milliseconds=seconds * 1000,
            outcome=outcome,
            reason="" if error is None else _reason(error),
        )
        logger.info(
            "Audited a tool call tool=%s caller=%s:%s results=%s ms=%.0f outcome=%s",
            record.tool,
            record.caller_kind,
            record.caller,
            "-" if record.results is None else record.results,
            record.milliseconds,
            record.outcome,
            extra={"audit": record.fields()},
        )
        if self._span_event is not None:
            flat: dict[str, str | int | float] = {
                f"kubevec.audit.{k}": v if isinstance(v, str | int | float) else json.dumps(v, sort_keys=True)
                for k, v in record.fields().items()
                if v is not None
            }
            self._span_event("kubevec.audit", flat)
        return record

    def _arguments(self, request: object) -> dict[str, str]:
        if isinstance(request, BaseModel):
            given = request.model_dump(exclude_none=True, exclude_defaults=True)
        elif dataclasses.is_dataclass(request) and not isinstance(request, type):
            given = {k: v for k, v in dataclasses.asdict(request).items() if v is not None}
        else:
            given = {}
        out = {}
        for key, value in sorted(given.items()):
            if key in WORDS and not self.queries:
                continue
            text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
            out[key] = redact_text(text[:MAX_VALUE], raw=False)
        return out


def results_of(answer: object) -> int | None:
    """How many results an answer holds: documents, counts, edges, entries; one document or none."""
    if answer is None:
        return 0
    if isinstance(answer, tuple):
        return 1  # a document and its collection
    for name in ("counts", "edges", "entries"):
        value = getattr(answer, name, None)
        if isinstance(value, Mapping | Sequence) and not isinstance(value, str):
            return len(value)
    if isinstance(answer, Mapping | Sequence) and not isinstance(answer, str):
        return len(answer)
    return None


def _reason(error: BaseException) -> str:
    first = str(error).splitlines()[0] if str(error) else ""
    return redact_text(f"{type(error).__name__}: {first}"[:MAX_VALUE], raw=False)
