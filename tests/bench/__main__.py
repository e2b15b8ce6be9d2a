"""``make bench``: every benchmark, printed as tables (figures and ratios, never pass/fail)."""

from __future__ import annotations

import asyncio
import sys

from tests.bench import access, answers, churn, cli, embedder, fleet, gate, held_out, history, retrieval, stores


def main() -> None:
    sections = [
        ("Embedder: all-MiniLM-L6-v2 int8", embedder.run),
        ("Embedder memory: onnxruntime arena and length sorting", embedder.memory),
        (
            stores.title(),
            stores.run,
        ),
        ("The gate: public canaries and real values, document build time on 3,000 objects (30 hostile)", gate.run),
        (
            "Status and Event churn: 1000 Deployments x 10 status rewrites (2 flip health), x 10 Warning Events",
            churn.run,
        ),
        ("Change history: 2,000 Deployments, rollouts, status churn and health flips (embedded Chroma)", history.run),
        ("Fleet: two clusters with different versions of 20 CRDs on one store, 3 resyncs each", fleet.run),
        ("Retrieval quality: shared CRDs x queries.jsonl", lambda: asyncio.run(retrieval.quality())),
        ("Query latency", lambda: asyncio.run(retrieval.latency())),
        ("One-shot CLI search", cli.run),
        ("Answers on public applications: Online Boutique + kube-prometheus on the real control plane", answers.run),
        *(
            (f"Answers on held-out applications ({folder.name}, see its SOURCES.md)", lambda f=folder: held_out.run(f))
            for folder in sorted(held_out.HERE.glob("apps-heldout*"))
        ),
        (
            "MCP access: 50 namespaces x 20 resource types, 1 and 200 new ServiceAccounts (real control plane)",
            access.run,
        ),
    ]
    for title, section in sections:
        print(f"\n== {title}", flush=True)
        print(section(), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
