"""Embedder throughput: kubevec's LocalEmbedder vs a bare onnxruntime loop on the same model.

Both embed the same ~60-token texts at batch 32 on all cores. The bare loop gets pre-tokenized,
pre-padded inputs and does no pooling: it is the physical ceiling of the model on this machine.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time

import numpy as np
import onnxruntime

from kubevec.inference.providers.embedders.local import MAX_BATCH_COST, LocalEmbedder, default_model_path
from kubevec.inference.tokens import load_tokenizer
from tests.bench.report import table

BATCH = 32
ROUNDS = 8


def texts(count: int) -> list[str]:
    base = (
        "Deployment payments-api-{i} | namespace: prod | apiVersion: apps/v1 | labels: app=payments, team=payments, "
        "tier=api | images: ghcr.io/acme/payments-api:2.3.{i} | ports: 8080/TCP | replicas: 3 | owner: Application/shop"
    )
    return [base.format(i=i) for i in range(count)]


def bare_loop(batches: list[list[str]]) -> float:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 0
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(str(default_model_path()), options, providers=["CPUExecutionProvider"])
    tokenizer = load_tokenizer()
    feeds = []
    for batch in batches:
        encodings = tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    session.run(None, feeds[0])  # warm-up
    started = time.perf_counter()
    for feed in feeds:
        session.run(["last_hidden_state"], feed)
    return sum(len(b) for b in batches) / (time.perf_counter() - started)


def ours(batches: list[list[str]]) -> float:
    embedder = LocalEmbedder(batch_size=BATCH)
    embedder.encode(batches[0])  # warm-up
    started = time.perf_counter()
    for batch in batches:
        embedder.encode(batch)
    return sum(len(b) for b in batches) / (time.perf_counter() - started)


def run() -> str:
    all_texts = texts(BATCH * ROUNDS)
    batches = [all_texts[i : i + BATCH] for i in range(0, len(all_texts), BATCH)]
    tokens = len(load_tokenizer().encode(all_texts[0]).ids)
    reference = bare_loop(batches)
    measured = ours(batches)
    rows = [
        ["bare onnxruntime loop (reference)", reference, 1.0],
        ["kubevec LocalEmbedder (tokenize + run + pool)", measured, measured / reference],
    ]
    return (
        table(["embedder, batch 32", "texts/s", "ratio"], rows)
        + f"\n({tokens} tokens per text, {len(all_texts)} texts; targets: ratio >= 0.90 and >= 45 texts/s)"
    )


def mixed_texts(count: int = 384) -> list[str]:
    """Capability-like long texts (~250 word pieces) among instance-like short ones, shuffled."""
    rng = random.Random(7)
    words = [
        "managed",
        "postgres",
        "cluster",
        "replicas",
        "backup",
        "schedule",
        "certificate",
        "issuer",
        "ingress",
        "gateway",
        "topic",
        "partition",
        "autoscaler",
        "queue",
        "secret",
        "reference",
        "volume",
        "snapshot",
        "storage",
        "class",
        "tls",
        "renewal",
    ]
    out = []
    for i in range(count):
        size = rng.choice([220, 240, 260]) if i % 10 < 3 else rng.randint(20, 70)
        out.append(f"Kind{i} | " + " ".join(rng.choice(words) for _ in range(size)))
    return out


def measure(
    *, arena: bool, sort: bool, batch: int, cost: int = MAX_BATCH_COST, int8: bool = False, release: bool = True
) -> dict[str, float]:
    """In this process: texts/s over ``mixed_texts`` (twice, 64 texts per call like the controller's
    flushes) and the peak RSS after it (MiB); ``release`` gives freed memory back after each call."""
    embedder = LocalEmbedder(batch_size=batch, arena=arena, sort_by_length=sort, max_batch_cost=cost, int8_weights=int8)
    encode = embedder._encode_documents if release else embedder.encode
    corpus = mixed_texts() * 2
    embedder.encode(corpus[:batch])  # warm-up
    started = time.perf_counter()
    for start in range(0, len(corpus), 64):
        encode(corpus[start : start + 64])
    rate = len(corpus) / (time.perf_counter() - started)
    return {"texts_per_s": rate, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def memory() -> str:
    """Each configuration in a fresh process, so peak RSS is its own."""
    unbounded = 1 << 40
    configs = [
        ("before: arena on, input order, 32 per batch", True, False, unbounded, False, False),
        ("arena off, input order, 32 per batch", False, False, unbounded, False, False),
        ("arena off, sorted by length, 32 per batch", False, True, unbounded, False, False),
        ("arena off, sorted, cost-capped at 2 x 256²", False, True, 2 * 256 * 256, False, False),
        ("kubevec: arena on, sorted, capped at 2 x 128², malloc_trim", True, True, MAX_BATCH_COST, False, True),
        ("  the same with int8_weights (no constant folding)", True, True, MAX_BATCH_COST, True, True),
    ]
    rows = []
    for label, arena, sort, cost, int8, release in configs:
        code = (
            "import json; from tests.bench.embedder import measure; "
            f"print(json.dumps(measure(arena={arena}, sort={sort}, batch=32, cost={cost}, int8={int8}, release={release})))"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        rows.append((label, json.loads(proc.stdout.strip().splitlines()[-1])))
    before = rows[0][1]
    table_rows = [
        [label, r["texts_per_s"], r["texts_per_s"] / before["texts_per_s"], r["peak_rss_mib"]] for label, r in rows
    ]
    return (
        table(["embedder, batch 32, mixed lengths", "texts/s", "vs before", "peak RSS MiB"], table_rows)
        + f"\n({len(mixed_texts())} texts twice, 64 per call, 30% at 220-260 words; targets: >= 0.90 of before, peak RSS bounded)"
    )


def main() -> None:
    print("== Embedder: all-MiniLM-L6-v2 int8")
    print(run())
    print("== Embedder memory: onnxruntime arena and length sorting")
    print(memory())


if __name__ == "__main__":
    main()
