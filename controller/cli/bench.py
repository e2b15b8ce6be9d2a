"""``kubevec bench retrieval``: how well the configured embedder (and reranker) answer judged questions.

The CRDs are described and embedded into an in-memory store, exactly as ``kubevec index crds``
would store them, so nothing configured is touched; the questions are asked as an agent would.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands, open_embedder
from kubevec.core.errors import CommandError

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings


def register(commands: Commands) -> None:
    bench = commands.add("bench", None, help="measure what the configured models give, before switching to them")
    retrieval = commands.nested(bench, dest="what", required=True).add(
        "retrieval",
        bench_retrieval_command,
        help="recall@1/@5, MRR and latency of the configured embedder and reranker on judged questions",
    )
    retrieval.add_argument("--crds", nargs="+", type=Path, required=True, help="CRD YAML files or folders")
    retrieval.add_argument(
        "--queries", type=Path, required=True, help='JSON Lines: {"query": "...", "expected": ["<crd name>", ...]}'
    )
    retrieval.add_argument("--no-hybrid", action="store_true", help="dense only (no BM25 fusion)")
    retrieval.add_argument("--no-rerank", action="store_true", help="leave the configured reranker out")
    retrieval.add_argument(
        "--show-misses", type=int, default=5, metavar="N", help="print N questions missed (default 5)"
    )
    retrieval.add_argument("-o", "--output", choices=["text", "json"], default="text", help="text (default) or json")


async def bench_retrieval_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.backends.memory import MemoryStore
    from kubevec.controller.sync.crd_files import index_crds
    from kubevec.inference.fleet import resource_of
    from kubevec.inference.providers.rerank import make_reranker
    from kubevec.query.evaluation import evaluate, read_questions
    from kubevec.query.search import SearchService

    questions = read_questions(args.queries)
    embedder = open_embedder(settings)
    reranker = None if args.no_rerank else make_reranker(settings.reranker, embedder=settings.embedder)
    store = MemoryStore()
    started = time.perf_counter()
    report = await index_crds(
        paths=args.crds,
        store=store,
        embedder=embedder,
        collection="capabilities",
        cluster=settings.cluster_name,
        batch_size=settings.embedder.batch_size,
    )
    indexed = time.perf_counter() - started
    for error in report.errors:
        print(f"kubevec bench: {error}", file=sys.stderr)
    if not report.documents:
        raise CommandError(f"no CRDs found in {', '.join(map(str, args.crds))}")
    known = {resource_of(i) async for i, _ in store.iter_ids("capabilities")}
    unknown = sorted({e for q in questions for e in q.expected} - known)
    if unknown:
        print(f"kubevec bench: warning: expected ids not among the CRDs: {', '.join(unknown[:5])}", file=sys.stderr)
    service = SearchService(
        store=store,
        embedder=embedder,
        collections={"capabilities": "capabilities"},
        reranker=reranker,
        rerank_candidates=settings.reranker.candidates,
    )

    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:  # one line, redrawn
            print(f"\rAsked {done}/{total} questions", end="\n" if done == total else "", file=sys.stderr, flush=True)
        elif done == total or done % 20 == 0:  # a log: a line now and then
            print(f"Asked {done}/{total} questions", file=sys.stderr, flush=True)

    scores = await evaluate(service, questions, hybrid=not args.no_hybrid, rerank=not args.no_rerank, progress=progress)
    setup = {
        "embedder": embedder.name,
        "dimension": embedder.dimension,
        "reranker": reranker.name if reranker is not None else None,
        "hybrid": not args.no_hybrid,
        "documents": report.documents,
        "index_seconds": round(indexed, 2),
    }
    if args.output == "json":
        print(json.dumps({**setup, **scores.to_json()}, indent=2))
        return 0
    print(f"embedder   {embedder.name} ({embedder.dimension}-d)")
    print(
        f"reranker   {setup['reranker'] or 'none'}    fusion {'hybrid (dense + BM25)' if setup['hybrid'] else 'dense only'}"
    )
    print(f"indexed    {report.documents} CRDs in {indexed:.1f} s ({report.documents / max(indexed, 1e-9):.0f} docs/s)")
    print(f"questions  {scores.queries}")
    print(f"recall@1   {scores.recall_at_1:.3f}")
    print(f"recall@5   {scores.recall_at_5:.3f}")
    print(f"MRR        {scores.mrr:.3f}")
    print(
        f"latency    p50 {scores.p50_ms:.1f} ms, p95 {scores.p95_ms:.1f} ms per question (embedding + search + rerank)"
    )
    if scores.degraded:
        print(f"degraded   {scores.degraded} answered from keywords alone: the embedder failed")
    for query, top in scores.misses[: args.show_misses]:
        print(f"miss       {query!r} -> {', '.join(top) or 'nothing'}")
    return 0
