"""Retrieval benchmark over ../shared/crds with queries.jsonl (recall@1, recall@5, MRR), plus latency.

Variants: (a) raw schema text, (b) a peer's format (``{Kind} ({group})`` + description lines),
(c) our describer, dense only, (d) our describer, hybrid (dense + BM25, RRF), (e) hybrid + MMR.
Quality runs through the real search service on the memory store (exact search; the store
conformance suite shows Chroma returns the same top-k). Latency runs on embedded Chroma at 20k
documents, including the query embedding.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import yaml

from kubevec.backends import Record
from kubevec.backends.chroma import ChromaStore
from kubevec.backends.memory import MemoryStore
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.documents import make_document
from kubevec.inference.manifests import is_crd, iter_manifest_files, load_manifests
from kubevec.inference.providers.embedders.local import LocalEmbedder
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.bench.report import percentile, table
from tests.conftest import CRD_CORPUS

#: The real-CRD corpus with queries.jsonl (``KUBEVEC_CRD_CORPUS``, default ../shared/crds).
SHARED = CRD_CORPUS


def load_crds() -> list[Mapping[str, Any]]:
    return [d for p in iter_manifest_files([SHARED]) for d in load_manifests(p.read_text(), source=str(p)) if is_crd(d)]


def raw_schema_text(crd: Mapping[str, Any]) -> str:
    version = next((v for v in crd["spec"]["versions"] if v.get("storage")), crd["spec"]["versions"][0])
    return yaml.safe_dump(version.get("schema", {}), sort_keys=False)[:4000]


def peer_text(crd: Mapping[str, Any]) -> str:
    version = next((v for v in crd["spec"]["versions"] if v.get("storage")), crd["spec"]["versions"][0])
    schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
    lines = [f"{crd['spec']['names']['kind']} ({crd['spec']['group']})", str(schema.get("description", ""))]
    spec = (schema.get("properties") or {}).get("spec") or {}
    for name, prop in (spec.get("properties") or {}).items():
        lines.append(f"{name}: {str(prop.get('description', ''))[:120]}")
    return "\n".join(lines)


def documents(crds: list[Mapping[str, Any]], text_of: Callable[[Mapping[str, Any]], str] | None) -> list[Any]:
    out = []
    for crd in crds:
        doc = describe_crd(crd).to_document()
        if text_of is not None:
            doc = make_document(
                id=doc.id, collection="capabilities", text=text_of(crd), metadata={"kind": doc.metadata["kind"]}
            )
        out.append(doc)
    return out


async def evaluate(
    embedder: LocalEmbedder,
    docs: list[Any],
    queries: list[dict[str, Any]],
    *,
    hybrid: bool,
    mmr: bool,
    fusion: Mapping[str, Any] | None = None,
) -> tuple[float, float, float]:
    store = MemoryStore()
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder=embedder.name)
    vectors = embedder.encode([d.text for d in docs])
    await store.upsert(
        "capabilities",
        [
            Record(id=d.id, vector=v.tolist(), text=d.text, metadata=d.metadata)
            for d, v in zip(docs, vectors, strict=True)
        ],
    )
    service = SearchService(
        store=store, embedder=embedder, collections={"capabilities": "capabilities"}, **(fusion or {})
    )
    r1 = r5 = mrr = 0.0
    for q in queries:
        results = await service.search(SearchRequest.build(query=q["query"], k=20, hybrid=hybrid, mmr=mmr))
        ranks = [i + 1 for i, r in enumerate(results) if r.id in q["expected"]]
        best = min(ranks) if ranks else None
        r1 += best == 1
        r5 += best is not None and best <= 5
        mrr += 1 / best if best else 0
    n = len(queries)
    return r1 / n, r5 / n, mrr / n


async def quality() -> str:
    if not (SHARED / "queries.jsonl").is_file():
        return f"skipped: no CRD corpus with queries.jsonl at {SHARED} (set KUBEVEC_CRD_CORPUS)"
    crds = load_crds()
    queries = [json.loads(line) for line in (SHARED / "queries.jsonl").read_text().splitlines() if line.strip()]
    embedder = LocalEmbedder()
    ours = documents(crds, None)
    rows = []
    variants = [
        ("(a) raw schema text, dense", documents(crds, raw_schema_text), False, False),
        ("(b) peer format, dense", documents(crds, peer_text), False, False),
        ("(c) kubevec describer, dense", ours, False, False),
        ("(d) kubevec describer, hybrid (default)", ours, True, False),
        ("(e) kubevec describer, hybrid + MMR", ours, True, True),
    ]
    textbook = {"rrf_k": 60, "lexical_weight": 0.3}
    runs: list[tuple[str, list[Any], bool, bool, Mapping[str, Any] | None]] = [(*v, None) for v in variants]
    runs.insert(4, ("(d') hybrid with textbook RRF k=60, weight 0.3", ours, True, False, textbook))
    from kubevec.controller.settings import Settings
    from kubevec.inference.providers.rerank import make_reranker

    settings = Settings()
    reranker = make_reranker(settings.reranker, embedder=settings.embedder)
    rerank_note = "(f) hybrid + reranker: not run; set KUBEVEC_RERANKER__PROVIDER=voyage and a key (needs the network)"
    if reranker is not None:
        rerank_note = ""
        fusion = {"reranker": reranker, "rerank_candidates": settings.reranker.candidates}
        runs.append((f"(f) hybrid + reranker {reranker.name}", ours, True, False, fusion))
    for label, docs, hybrid, mmr, fusion in runs:
        print(f"  evaluating {label} ...", file=sys.stderr, flush=True)
        r1, r5, mrr = await evaluate(embedder, docs, queries, hybrid=hybrid, mmr=mmr, fusion=fusion)
        rows.append([label, r1, r5, mrr])
    return (
        table(["variant", "recall@1", "recall@5", "MRR"], rows)
        + f"\n({len(crds)} CRDs, {len(queries)} queries; target for (d): recall@5 >= 0.90, MRR >= 0.75)"
        + (f"\n{rerank_note}" if rerank_note else "")
    )


async def latency(size: int = 20_000, queries: int = 100) -> str:
    embedder = LocalEmbedder()
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as tmp:
        store = ChromaStore(path=f"{tmp}/chroma")
        await store.ensure_collection("instances", dimension=384, embedder=embedder.name)
        print(f"  loading {size} documents into embedded Chroma ...", file=sys.stderr, flush=True)
        vectors = rng.normal(size=(size, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        kinds = ["Deployment", "Service", "ConfigMap", "Pod", "Certificate"]
        for start in range(0, size, 2000):
            await store.upsert(
                "instances",
                [
                    Record(
                        id=f"bench/ns{i % 40}/apps/v1/{kinds[i % 5]}/obj-{i}",
                        vector=vectors[i].tolist(),
                        text=f"{kinds[i % 5]} obj-{i} | namespace: ns{i % 40}",
                        metadata={"kind": kinds[i % 5], "namespace": f"ns{i % 40}", "content_hash": str(i)},
                    )
                    for i in range(start, min(size, start + 2000))
                ],
            )
        service = SearchService(store=store, embedder=embedder, collections={"instances": "instances"})
        # Each kind in its own loop after a warm-up, so one kind's scans do not bill the next.
        kinds_of_query: dict[str, Callable[[int], dict[str, Any]]] = {
            "dense": lambda i: {"query": f"payments api deployment {i}", "hybrid": False},
            "dense + filter": lambda i: {
                "query": f"web frontend {i}",
                "hybrid": False,
                "kind": "Deployment",
                "namespace": "ns3",
            },
            "keyword, rare word": lambda i: {"keyword": str(i * 37)},
            "keyword, rare + common word": lambda i: {"keyword": f"obj-{i * 37}"},
            "keyword, word in every doc": lambda i: {"keyword": "obj"},
        }
        timings: dict[str, list[float]] = {}
        for label, make in kinds_of_query.items():
            for i in range(10):
                await service.search(SearchRequest.build(collection="instances", k=5, **make(i)))
            timings[label] = []
            for i in range(queries):
                started = time.perf_counter()
                await service.search(SearchRequest.build(collection="instances", k=5, **make(i)))
                timings[label].append((time.perf_counter() - started) * 1000)
        await store.close()
    rows = [[label, percentile(v, 50), percentile(v, 95)] for label, v in timings.items()]
    return (
        table(["query (embedded Chroma, 20k docs, incl. embedding)", "p50 ms", "p95 ms"], rows)
        + "\n(target: dense p50 <= 15 ms)"
    )


def main() -> None:
    print("== Retrieval quality: shared CRDs x queries.jsonl")
    print(asyncio.run(quality()))
    print()
    print("== Query latency")
    print(asyncio.run(latency()))


if __name__ == "__main__":
    main()
