"""Issue 50's figures in ``make bench-scale``: the goal check, the table and the JSON a run leaves."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench import scale_figures
from tests.bench.scale_figures import Goal, json_path, verdict


def test_a_goal_is_met_at_its_limit_and_not_past_it() -> None:
    assert verdict(Goal(450), 450.0) == "met"
    assert verdict(Goal(450), 450.1) == "not met"
    assert verdict(Goal(0, exact=True), 0) == "met"
    assert verdict(Goal(0, exact=True), 1) == "not met"
    assert verdict(Goal(0, exact=True), -1) == "not met"  # "= 0" is not "<= 0"
    assert verdict(Goal(1.2), None) == "not measured"
    assert verdict(Goal(1.2), float("nan")) == "not measured"  # nan <= x is False: it must not read "not met"
    assert verdict(None, 5.0) == ""


def test_the_restart_goal_follows_the_size() -> None:
    def restart(objects: int) -> Goal | None:
        return next(f.goal for f in scale_figures.figures(objects=objects) if f.key == "restart.ready_s")

    assert restart(20_000) == Goal(10)
    assert restart(100_000) == Goal(30)


def test_the_json_holds_every_figure_its_goal_and_verdict(tmp_path: Path) -> None:
    values = {"sync.peak_rss_mib": 512.0, "restart.ready_s": 12.5, "sync.drift": 0, "churn.p50": 0.2}
    path = scale_figures.write(
        tmp_path / "out.json", values, objects=100_000, context={"objects": 100_000, "embedder": "standin"}
    )
    written = json.loads(path.read_text())
    figures = written["figures"]
    assert written["run"] == {"objects": 100_000, "embedder": "standin"}
    assert figures["sync.peak_rss_mib"] == {"now": 512.0, "before": 592.0, "goal": "<= 450", "met": False}
    assert figures["restart.ready_s"] == {"now": 12.5, "before": 102.8, "goal": "<= 30", "met": True}
    assert figures["sync.drift"]["met"] is True
    assert figures["churn.p50"] == {"now": 0.2, "before": None, "goal": None, "met": None}  # no issue 50 goal
    # a figure the run never reached is there, not measured, with issue 50's own figure beside it
    assert figures["embedded.mcp.first_answer_s"] == {"now": None, "before": 203.0, "goal": "<= 15", "met": None}


def test_nan_is_written_as_null_not_as_invalid_json(tmp_path: Path) -> None:
    path = scale_figures.write(tmp_path / "out.json", {"server.mcp.p50_s": float("nan")}, objects=10, context={})
    assert "NaN" not in path.read_text()
    assert json.loads(path.read_text())["figures"]["server.mcp.p50_s"]["now"] is None


def test_the_table_sets_before_beside_now_and_the_verdict() -> None:
    text = scale_figures.table({"help.cpu_s": 0.14, "sync.peak_rss_mib": 600.0}, objects=100_000)
    help_row = next(line for line in text.splitlines() if line.startswith("`kubevec --help`"))
    assert help_row.split() == ["`kubevec", "--help`", "CPU", "(s)", "0.960", "0.140", "<=", "0.15", "met"]
    rss_row = next(line for line in text.splitlines() if line.startswith("initial sync: controller peak RSS"))
    assert rss_row.rstrip().endswith("not met")
    assert "not measured" in text  # the readers this run skipped


def test_the_json_path_comes_from_the_environment() -> None:
    assert json_path({}) == Path("bench-scale.json")
    assert json_path({"KUBEVEC_BENCH_JSON": "/tmp/x.json"}) == Path("/tmp/x.json")
