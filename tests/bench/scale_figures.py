"""Issue 50's figures at 100k: what was measured before, the goal, and whether a run meets it; the JSON file.

Every figure ``make bench-scale`` reports against issue 50 has a key here (``sync.cpu_per_1000_docs``,
``embedded.mcp.p95_s``...). :func:`table` prints them beside issue 50's own measurements ("before":
200 CRDs and 100,292 objects, the stand-in embedder, a Chroma server for the controller, the readers
over the same store embedded, 2 shared cores) and the goal; :func:`write` saves every figure, the
goals and the verdicts as JSON (``KUBEVEC_BENCH_JSON``, default ``bench-scale.json`` here), so a
later run can be compared without reading a table.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.bench.report import table as format_table

#: Restart goals by size: ready within 10 s at 20,000 objects, 30 s at 100,000.
SMALL_CLUSTER = 20_000
#: Issue 50's initial sync: 237.5 controller CPU seconds for 100,292 objects.
BEFORE_SYNC_CPU = 237.5
BEFORE_OBJECTS = 100_292

Value = float | int | None


@dataclasses.dataclass(frozen=True)
class Goal:
    """``value <= limit`` (``exact=False``) or ``value == limit``."""

    limit: float
    exact: bool = False

    def met(self, value: Value) -> bool | None:
        """Whether ``value`` meets it; None when nothing was measured."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return value == self.limit if self.exact else value <= self.limit

    def __str__(self) -> str:
        return f"{'=' if self.exact else '<='} {self.limit:g}"


@dataclasses.dataclass(frozen=True)
class Figure:
    key: str
    label: str
    before: float | str | None = None
    goal: Goal | None = None


def reader_figures(store: str) -> list[Figure]:
    """The readers' figures over one store (``server``: the Chroma server; ``embedded``: its directory)."""
    return [
        Figure(f"{store}.search.one_shot_s", f"{store}: first `kubevec search`, own process (s)", 78.0),
        Figure(f"{store}.resident.first_answer_s", f"{store}: resident reader, first answer after start (s)", 257.0),
        Figure(f"{store}.resident.fresh_p50_s", f"{store}: resident reader, search p50, first pass (s)", "8.4-18.2"),
        Figure(f"{store}.resident.fresh_p95_s", f"{store}: resident reader, search p95, first pass (s)", "8.4-18.2"),
        Figure(f"{store}.resident.p50_s", f"{store}: resident reader, search p50 (s)", "8.4-18.2", Goal(0.3)),
        Figure(f"{store}.resident.p95_s", f"{store}: resident reader, search p95 (s)", "8.4-18.2", Goal(1.0)),
        Figure(f"{store}.resident.peak_rss_mib", f"{store}: resident reader, peak RSS (MiB)", 813.0, Goal(600)),
        Figure(f"{store}.mcp.initialize_s", f"{store}: `kubevec mcp` stdio, initialize after (s)", 15.0),
        Figure(f"{store}.mcp.first_answer_s", f"{store}: `kubevec mcp`, first answer after start (s)", 203.0, Goal(15)),
        Figure(f"{store}.mcp.fresh_p50_s", f"{store}: `kubevec mcp`, search p50, first pass (s)", "2.7-19.7"),
        Figure(f"{store}.mcp.fresh_p95_s", f"{store}: `kubevec mcp`, search p95, first pass (s)", "2.7-19.7"),
        Figure(f"{store}.mcp.p50_s", f"{store}: `kubevec mcp`, search p50 (s)", "2.7-19.7", Goal(0.3)),
        Figure(f"{store}.mcp.p95_s", f"{store}: `kubevec mcp`, search p95 (s)", "2.7-19.7", Goal(1.0)),
        Figure(f"{store}.mcp.peak_rss_mib", f"{store}: `kubevec mcp`, peak RSS (MiB)", 835.0, Goal(600)),
    ]


def figures(*, objects: int) -> list[Figure]:
    """Every figure of issue 50, its goals for a cluster of ``objects`` objects."""
    restart = Goal(10 if objects <= SMALL_CLUSTER else 30)
    return [
        Figure("sync.ready_s", "initial sync: ready after (s)"),
        Figure("sync.documents", "initial sync: documents in the store", float(BEFORE_OBJECTS)),
        Figure("sync.controller_cpu_s", "initial sync: controller CPU (s)", BEFORE_SYNC_CPU),
        Figure(
            "sync.cpu_per_1000_docs",
            "initial sync: controller CPU per 1,000 documents (s)",
            round(BEFORE_SYNC_CPU / BEFORE_OBJECTS * 1000, 2),
            Goal(1.2),
        ),
        Figure("sync.peak_rss_mib", "initial sync: controller peak RSS (MiB)", 592.0, Goal(450)),
        Figure("sync.drift", "initial sync: store vs cluster, missing+orphaned+stale", None, Goal(0, exact=True)),
        Figure("restart.ready_s", "restart, nothing changed: ready after (s)", 102.8, restart),
        Figure("restart.embeddings", "restart: embeddings computed", 0.0, Goal(0, exact=True)),
        Figure("restart.peak_rss_mib", "restart: controller peak RSS (MiB)", None, Goal(450)),
        Figure("restart.drift", "restart: store vs cluster, missing+orphaned+stale", None, Goal(0, exact=True)),
        *reader_figures("server"),
        *reader_figures("embedded"),
        Figure("help.cpu_s", "`kubevec --help` CPU (s)", 0.96, Goal(0.15)),
    ]


def verdict(goal: Goal | None, value: Value) -> str:
    if goal is None:
        return ""
    met = goal.met(value)
    return "not measured" if met is None else "met" if met else "not met"


def shown(value: Value | str) -> object:
    return "-" if value is None else value


def table(values: Mapping[str, Value], *, objects: int) -> str:
    """Issue 50's figures: before, now, goal, met or not (a figure this run did not measure shows "-")."""
    rows: list[list[object]] = [
        [f.label, shown(f.before), shown(values.get(f.key)), str(f.goal or ""), verdict(f.goal, values.get(f.key))]
        for f in figures(objects=objects)
    ]
    return format_table([f"issue 50 at {objects} objects", "before", "now", "goal", ""], rows) + (
        "\n(before: issue 50's own figures, 200 CRDs + 100,292 objects, readers over the store embedded;"
        "\n now: this run. p50/p95 of the resident reader include each `kubevec search` process's start.)"
    )


def document(values: Mapping[str, Value], *, objects: int, context: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON of a run: every figure (also the ones issue 50 names no goal for) and what the run was."""
    known = {f.key: f for f in figures(objects=objects)}
    out: dict[str, Any] = {}
    for key, value in sorted(values.items()):
        figure = known.get(key)
        goal = figure.goal if figure else None
        out[key] = {
            "now": None if isinstance(value, float) and math.isnan(value) else value,
            "before": figure.before if figure else None,
            "goal": str(goal) if goal else None,
            "met": goal.met(value) if goal else None,
        }
    for key, figure in known.items():  # a figure the run did not reach is there, as not measured
        out.setdefault(
            key, {"now": None, "before": figure.before, "goal": str(figure.goal) if figure.goal else None, "met": None}
        )
    return {"run": dict(context), "figures": out}


def write(path: Path, values: Mapping[str, Value], *, objects: int, context: Mapping[str, Any]) -> Path:
    path.write_text(json.dumps(document(values, objects=objects, context=context), indent=2, sort_keys=True) + "\n")
    return path


def json_path(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("KUBEVEC_BENCH_JSON") or "bench-scale.json")
