"""The stores benchmark's records and bookkeeping: what it measures is what the table says it measured."""

from __future__ import annotations

import numpy as np
import pytest

from kubevec.core import fields
from kubevec.inference.identity import parse_instance_id
from tests.bench import store_records, stores


def _records(size: int) -> list[store_records.Record]:
    return [record for batch in store_records.batches(size, batch=300) for record in batch]


def test_records_are_shaped_like_instance_documents() -> None:
    for record in _records(700):
        parsed = parse_instance_id(record.id)
        assert parsed is not None, record.id
        meta = record.metadata
        assert (parsed.cluster, parsed.namespace, parsed.kind, parsed.name) == (
            meta["cluster"],
            meta["namespace"],
            meta["kind"],
            meta["name"],
        )
        assert (parsed.group or "core") == meta["group"]
        assert 300 <= len(record.text.encode()) <= 600
        assert {name for name in meta if fields.named(name) is None} == set()
    assert {"kind", "namespace", "cluster"} <= set(fields.indexed())


def test_batches_are_the_same_records_in_every_process_and_unit_vectors() -> None:
    first, again = _records(650), _records(650)
    assert len(first) == 650
    assert [r.id for r in first] == [r.id for r in again]
    assert [r.vector for r in first] == [r.vector for r in again]
    norms = np.linalg.norm(np.array([r.vector for r in first]), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)
    assert len({r.id for r in first}) == 650


def test_match_counts_agree_with_the_records_themselves() -> None:
    records = _records(3000)
    by_hand = {
        "kind + namespace": sum(
            r.metadata["kind"] == "Deployment" and r.metadata["namespace"] == "team-3" for r in records
        ),
        "kind in 3": sum(r.metadata["kind"] in ("Deployment", "StatefulSet", "DaemonSet") for r in records),
        "cluster": sum(r.metadata["cluster"] == "staging" for r in records),
        "none": 3000,
    }
    assert store_records.match_counts(3000) == by_hand


def test_at_100k_each_filter_matches_what_the_title_says() -> None:
    counts = store_records.match_counts(100_000)
    assert 150 <= counts["kind + namespace"] <= 250  # 0.2%: still more than a top-10
    assert 10_000 <= counts["kind in 3"] <= 12_000
    assert 19_000 <= counts["cluster"] <= 21_000


@pytest.mark.parametrize(
    ("hits", "matching", "short"),
    [(10, 5000, False), (9, 5000, True), (0, 5000, True), (5, 5, False), (4, 5, True), (0, 0, False)],
)
def test_an_answer_is_short_only_of_what_the_filter_matches(hits: int, matching: int, short: bool) -> None:
    assert stores.short_of(hits, matching=matching) is short


def test_latencies_summary_counts_short_answers() -> None:
    summary = stores.Latencies(millis=[float(ms) for ms in range(1, 101)], short=3, fewest=2, cpu_ms=4.0).summary()
    assert summary == {"queries": 100, "p50": 51.0, "p95": 95.0, "p99": 99.0, "cpu_ms": 4.0, "short": "3 (fewest 2)"}
    assert stores.Latencies(millis=[1.0], short=0, fewest=10).summary()["short"] == 0


def test_a_target_survives_the_command_line_with_empty_values() -> None:
    target = stores.Target(backend="weaviate", tmp="/tmp/x", url="http://127.0.0.1:1 50051", password="")
    assert stores.Target.from_argv(target.argv()) == target


def test_selected_stores_keep_the_bench_order_and_refuse_unknown_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBEVEC_BENCH_STORES", "redis, chroma-embedded")
    assert stores.selected() == ["chroma-embedded", "redis"]
    monkeypatch.setenv("KUBEVEC_BENCH_STORES", "chroma,redis")
    with pytest.raises(SystemExit, match="unknown chroma"):
        stores.selected()
    monkeypatch.delenv("KUBEVEC_BENCH_STORES")
    assert stores.selected() == list(stores.STORES)


def test_the_tables_show_a_store_stopped_short_and_a_failed_one() -> None:
    summary = {"queries": 12, "p50": 1.5, "p95": 2.0, "p99": 2.5, "short": "4 (fewest 0)"}
    text = stores.tables(
        {
            "baseline": {"client_rss_mb": 200},
            "qdrant-local": {
                "loaded": 61_000,
                "upserts_per_s": 70,
                "stopped": "stopped at 61,000 after 901 s",
                "latencies": {"cluster": summary},
                "client_rss_mb": 900,
                "server_rss_mb": "",
                "open_s": 12.5,
                "reader_rss_mb": 800,
            },
            "redis": {"failed": "exit 1 (its stderr is above)"},
        }
    )
    lines = text.splitlines()
    assert any("qdrant-local" in line and "61000" in line and "stopped at 61,000" in line for line in lines)
    assert any(line.split()[:2] == ["redis", "failed"] for line in lines)
    assert any(line.startswith("qdrant-local") and "cluster" in line and "4 (fewest 0)" in line for line in lines)
