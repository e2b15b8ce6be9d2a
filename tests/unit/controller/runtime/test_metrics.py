"""What /metrics promises operators: build info, process health, zeros before the first error, store timings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import ERROR_STAGES, STORE_OPERATIONS, Metrics
from kubevec.core.errors import BackendError
from kubevec.core.version import kubevec_version

REPO = Path(__file__).resolve().parents[4]


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_build_info_names_version_embedder_model_dimension_backend() -> None:
    metrics = Metrics()
    metrics.describe_build(embedder="local", model="all-MiniLM-L6-v2", dimension=384, backend="chroma")
    labels = (
        ("backend", "chroma"),
        ("dimension", "384"),
        ("embedder", "local"),
        ("model", "all-MiniLM-L6-v2"),
        ("version", kubevec_version()),
    )
    assert samples(metrics)[("kubevec_build_info", labels)] == 1.0


def test_process_and_python_collectors_are_exported() -> None:
    names = {name for name, _ in samples(Metrics())}
    assert {"process_resident_memory_bytes", "process_open_fds", "python_info", "python_gc_collections_total"} <= names


def test_labelled_counters_start_at_zero_and_have_no_created_series() -> None:
    metrics = Metrics()
    metrics.describe_build(embedder="local", model="m", dimension=8, backend="memory")
    got = samples(metrics)
    for stage in ERROR_STAGES:
        assert got[("kubevec_errors_total", (("stage", stage),))] == 0.0
    for operation in STORE_OPERATIONS:
        assert got[("kubevec_store_operation_errors_total", (("backend", "memory"), ("operation", operation)))] == 0.0
    for collection in ("capabilities", "instances"):
        assert got[("kubevec_upserts_total", (("collection", collection),))] == 0.0
        assert got[("kubevec_embeddings_skipped_total", (("collection", collection), ("reason", "unchanged")))] == 0.0
    assert not [name for name, _ in got if name.endswith("_created")]


def test_every_error_stage_in_the_sources_is_declared() -> None:
    """A new ``stage=`` that is not in ERROR_STAGES would have no zero series for alerts to see."""
    used = {
        match
        for path in (REPO / "controller").rglob("*.py")
        for match in re.findall(r'stage="(\w+)"', path.read_text())
    }
    assert {"inference", "discovery", "policy"} <= used  # every sub-package is read (a flat glob missed them)
    assert used <= set(ERROR_STAGES), used - set(ERROR_STAGES)


async def test_an_observed_store_times_operations_and_counts_failures() -> None:
    metrics = Metrics()
    metrics.describe_build(embedder="local", model="m", dimension=2, backend="memory")
    store = MemoryStore()
    store.observer = metrics
    await store.ensure_collection("instances", dimension=2, embedder="m")
    await store.upsert("instances", [Record(id="a", vector=[1.0, 0.0], text="t", metadata={"content_hash": "h"})])
    assert [i async for i, _ in store.iter_ids("instances")] == ["a"]
    with pytest.raises(BackendError, match="does not exist"):
        await store.count("never-created")
    got = samples(metrics)
    key = (("backend", "memory"), ("operation", "upsert"))
    assert got[("kubevec_store_operation_duration_seconds_count", key)] == 1.0
    assert (
        got[("kubevec_store_operation_duration_seconds_count", (("backend", "memory"), ("operation", "iter_ids")))]
        == 1.0
    )
    assert got[("kubevec_store_operation_errors_total", (("backend", "memory"), ("operation", "count")))] == 1.0
    assert got[("kubevec_store_operation_errors_total", key)] == 0.0
    # keyword search reads its results itself: one operation, not a get besides
    await store.keyword_search("instances", text="t", k=1)
    got = samples(metrics)
    get = (("backend", "memory"), ("operation", "get"))
    assert got.get(("kubevec_store_operation_duration_seconds_count", get), 0.0) == 0.0


def test_embedder_retries_and_llm_counts_are_exported_by_provider() -> None:
    import types

    metrics = Metrics()
    metrics.describe_build(embedder="voyage", model="voyage-4", dimension=1024, backend="qdrant")
    metrics.watch_counts(
        embedder=types.SimpleNamespace(retries=3),
        llm=types.SimpleNamespace(requests_made=2, cache_hits=5, failures=1),
    )
    got = samples(metrics)
    assert got[("kubevec_embedding_retries_total", (("provider", "voyage"),))] == 3.0
    assert got[("kubevec_embedder_errors_total", (("provider", "voyage"), ("reason", "unavailable")))] == 0.0
    assert got[("kubevec_llm_requests_total", ())] == 2.0
    assert got[("kubevec_llm_cache_hits_total", ())] == 5.0
    assert got[("kubevec_llm_failures_total", ())] == 1.0
    for tool in ("vector_search", "get_document", "list_facets"):
        assert got[("kubevec_mcp_request_errors_total", (("tool", tool),))] == 0.0


async def test_mcp_tools_served_by_the_controller_are_timed_and_counted() -> None:
    from kubevec.query.search import SearchService

    metrics = Metrics()
    store = MemoryStore()
    await store.ensure_collection("instances", dimension=2, embedder="m")
    await store.upsert("instances", [Record(id="a", vector=[1.0, 0.0], text="t", metadata={"content_hash": "h"})])
    service = SearchService(
        store=store, embedder=None, collections={"instances": "instances", "capabilities": "caps"}, observer=metrics
    ).scoped(None)
    assert (await service.find_document("a", collection="instances")) is not None
    with pytest.raises(BackendError):
        await service.facets("capabilities", "kind")  # that collection was never created
    got = samples(metrics)
    assert got[("kubevec_mcp_request_duration_seconds_count", (("tool", "get_document"),))] == 1.0
    assert got[("kubevec_mcp_request_errors_total", (("tool", "list_facets"),))] == 1.0
    assert got[("kubevec_mcp_request_errors_total", (("tool", "get_document"),))] == 0.0


def test_every_observed_store_operation_has_its_zero_series() -> None:
    """The store tells of the operations it decorates; each needs its declared series for alerts."""
    text = (REPO / "backends" / "base.py").read_text()
    assert set(re.findall(r'@_measured(?:_pages)?\("(\w+)"\)', text)) == set(STORE_OPERATIONS)
