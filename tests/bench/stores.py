"""Store benchmark: every store at 100,000 instance-shaped records of 384 dims (``KUBEVEC_BENCH_STORE_SIZE``).

Per store: upserts/s, top-10 latency p50/p95/p99 for the filters agents send and for none, the
client's peak RSS and the server's RSS, and the open time: a fresh process opening the store and
answering its first filtered query, which is what a reader (``kubevec mcp``, the resident reader)
pays at start. A store that cannot load the size within ``KUBEVEC_BENCH_STORE_BUDGET`` seconds (15
minutes) is measured at the size it reached and says so; a query returning fewer than 10 hits where
the filter matches more is counted in "short".

Quick mode for development: ``KUBEVEC_BENCH_STORE_SIZE=2000``; one store:
``KUBEVEC_BENCH_STORES=chroma-embedded python -m tests.bench.stores``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from kubevec.backends import VectorStore
from kubevec.backends.chroma import ChromaStore
from kubevec.backends.lance import LanceStore
from kubevec.backends.memory import MemoryStore
from kubevec.backends.pgvector import PgvectorStore
from kubevec.backends.qdrant import QdrantStore
from kubevec.backends.redis import RedisStore
from kubevec.backends.weaviate import WeaviateStore
from kubevec.inference.documents import INDEXED_FIELDS
from tests.bench.report import percentile, table
from tests.bench.store_records import DIM, FILTERS, batches, match_counts, queries
from tests.services import chroma_server, postgres_server, redis_server, weaviate_server

SIZE: Final = int(os.environ.get("KUBEVEC_BENCH_STORE_SIZE", "100000"))
#: Seconds a store may take to load SIZE records before it is measured at the size it reached.
UPSERT_BUDGET: Final = float(os.environ.get("KUBEVEC_BENCH_STORE_BUDGET", "900"))
QUERIES: Final = 100
#: Seconds per filter: a store answering in seconds is measured on fewer queries (the count is shown).
QUERY_BUDGET: Final = 30.0
BATCH: Final = 500
COLLECTION: Final = "bench"
#: The query the open time is measured with (what a reader's first question looks like).
FIRST_QUERY: Final = "kind + namespace"

#: Each store is measured in a process of its own, so its memory is its own: the embedded stores by the
#: process's peak RSS (the baseline row is the same process with the queries alone; records are built
#: batch by batch, so the data set is not in it), the servers by the resident memory of their processes.
STORES: Final = (
    "baseline",
    "memory",
    "chroma-embedded",
    "lancedb",
    "qdrant-local",
    "chroma-server",
    "pgvector",
    "weaviate",
    "redis",
)
#: Command-line words of each server's processes (for their RSS).
SERVER_MARKERS: Final = {
    "chroma-server": "chroma",
    "pgvector": "postgres",
    "weaviate": "weaviate-server",
    "redis": "redis-server",
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Target:
    """Where one store lives: what a fresh process needs to open it again."""

    backend: str
    tmp: str
    url: str = ""
    password: str = ""

    def argv(self) -> list[str]:
        return ["--backend", self.backend, "--tmp", self.tmp, "--url", self.url, "--password", self.password]

    @classmethod
    def from_argv(cls, argv: Sequence[str]) -> Target:
        args = dict(zip(argv[::2], argv[1::2], strict=True))
        return cls(backend=args["--backend"], tmp=args["--tmp"], url=args["--url"], password=args["--password"])

    def factory(self) -> Callable[[], VectorStore]:
        if self.backend == "weaviate":  # url: "<rest url> <grpc port>"
            rest, grpc = self.url.split()
            return lambda: WeaviateStore(url=rest, grpc_port=int(grpc))
        factories: dict[str, Callable[[], VectorStore]] = {
            "memory": MemoryStore,
            "chroma-embedded": lambda: ChromaStore(path=f"{self.tmp}/chroma-embedded"),
            "lancedb": lambda: LanceStore(path=f"{self.tmp}/lancedb"),
            "qdrant-local": lambda: QdrantStore(path=f"{self.tmp}/qdrant-local"),
            "chroma-server": lambda: ChromaStore(url=self.url),
            "pgvector": lambda: PgvectorStore(url=self.url, password=self.password),
            "redis": lambda: RedisStore(url=self.url, password=self.password),
        }
        return factories[self.backend]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Latencies:
    """One filter's query times (ms) and how many answers came back short of a full top-10."""

    millis: list[float]
    short: int
    fewest: int
    #: CPU per query, the client's and the server's: what a query costs whatever else the machine runs.
    cpu_ms: float = float("nan")

    def summary(self) -> dict[str, Any]:
        return {
            "queries": len(self.millis),
            "p50": percentile(self.millis, 50),
            "p95": percentile(self.millis, 95),
            "p99": percentile(self.millis, 99),
            "cpu_ms": self.cpu_ms,
            "short": f"{self.short} (fewest {self.fewest})" if self.short else 0,
        }


LATENCY_KEYS: Final = ("queries", "p50", "p95", "p99", "cpu_ms", "short")


def short_of(hits: int, *, matching: int, k: int = 10) -> bool:
    """Whether an answer of ``hits`` is short: the filter matches at least ``k`` records (or ``matching``)."""
    return hits < min(k, matching)


def peak_rss_mb() -> int:
    """This process's peak RSS since it started (``VmHWM``: ``ru_maxrss`` keeps the forking parent's peak)."""
    status = Path("/proc/self/status").read_text().splitlines()
    return round(int(next(line for line in status if line.startswith("VmHWM")).split()[1]) / 1024)


async def _load(store: VectorStore, size: int, *, servers: Sequence[int]) -> tuple[int, float, float, str]:
    """Records loaded, seconds spent in ``upsert`` (building the records is not the store's), the CPU
    seconds the client and ``servers`` spent in it, and why it stopped short (a failure, or the budget
    of wall time), if it did."""
    await store.drop_collection(COLLECTION)
    await store.ensure_collection(COLLECTION, dimension=DIM, embedder="bench", indexed=INDEXED_FIELDS)
    loaded, upserting, cpu, start, stopped = 0, 0.0, 0.0, time.perf_counter(), ""
    for batch in batches(size, batch=BATCH):
        t0, cpu0 = time.perf_counter(), time.process_time() + cpu_seconds(servers)
        try:
            await store.upsert(COLLECTION, batch)
        except Exception as exc:  # the bench reports a store's failure, it does not stop
            stopped = f"failed at {loaded:,}: {type(exc).__name__}: {str(exc)[:80]}"
            break
        upserting += time.perf_counter() - t0
        cpu += time.process_time() + cpu_seconds(servers) - cpu0
        loaded += len(batch)
        if loaded % 10_000 == 0:
            print(f"    {loaded:,} records, {loaded / upserting:.0f}/s", file=sys.stderr, flush=True)
        if time.perf_counter() - start > UPSERT_BUDGET and loaded < size:
            stopped = f"stopped at {loaded:,} after {time.perf_counter() - start:.0f} s"
            break
    return loaded, upserting, cpu, stopped


async def _query(store: VectorStore, *, loaded: int, servers: Sequence[int]) -> dict[str, Latencies]:
    vectors = queries(QUERIES)
    counts = match_counts(loaded)
    out = {}
    for label, query_filter in FILTERS.items():
        millis: list[float] = []
        short, fewest, cpu, started = 0, 10, 0.0, time.perf_counter()
        for vector in vectors:
            cpu0 = time.process_time() + cpu_seconds(servers)
            t0 = time.perf_counter()
            hits = await store.search(COLLECTION, vector=vector.tolist(), k=10, filter=query_filter)
            millis.append((time.perf_counter() - t0) * 1000)
            cpu += time.process_time() + cpu_seconds(servers) - cpu0
            short += short_of(len(hits), matching=counts[label])
            fewest = min(fewest, len(hits))
            if time.perf_counter() - started > QUERY_BUDGET:
                break
        out[label] = Latencies(millis=millis, short=short, fewest=fewest, cpu_ms=cpu * 1000 / len(millis))
    return out


async def opening(target: Target) -> dict[str, float]:
    """A fresh client's time to open the store and answer its first filtered query, and its peak RSS."""
    vector = queries(1)[0].tolist()
    start = time.perf_counter()
    store = target.factory()()
    try:
        await store.search(COLLECTION, vector=vector, k=10, filter=FILTERS[FIRST_QUERY])
        seconds = time.perf_counter() - start
    finally:
        await store.close()
    return {"open_s": seconds, "reader_rss_mb": peak_rss_mb()}


def _open_in_fresh_process(target: Target) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.stores", "--open", *target.argv()],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return {"open_s": "failed", "reader_rss_mb": done.stderr.strip().splitlines()[-1][:60] if done.stderr else ""}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def measure(target: Target) -> dict[str, Any]:
    """One store, in this process: load, query, open afresh, the memory of both sides, then drop."""
    if target.backend == "baseline":
        queries(QUERIES)
        return {"client_rss_mb": peak_rss_mb()}
    marker = SERVER_MARKERS.get(target.backend)
    servers = server_pids(marker, root=os.getppid()) if marker else []
    store = target.factory()()
    try:
        loaded, seconds, cpu, stopped = await _load(store, SIZE, servers=servers)
        latencies = await _query(store, loaded=loaded, servers=servers)
        client_rss = peak_rss_mb()
    finally:
        await store.close()
    opened = {"open_s": "", "reader_rss_mb": ""} if target.backend == "memory" else _open_in_fresh_process(target)
    server_rss = server_rss_mb(servers) if marker else ""
    with contextlib.suppress(Exception):
        store = target.factory()()
        await store.drop_collection(COLLECTION)
        await store.close()
    return {
        "loaded": loaded,
        "upserts_per_s": round(loaded / seconds) if seconds else 0,
        "upsert_cpu_s_per_1k": round(cpu / loaded * 1000, 2) if loaded else "",
        "stopped": stopped,
        "latencies": {label: value.summary() for label, value in latencies.items()},
        "client_rss_mb": client_rss,
        "server_rss_mb": server_rss,
        **opened,
    }


def server_pids(marker: str, *, root: int) -> list[int]:
    """``root``'s descendants whose command line holds ``marker`` (a server and its workers), not this process."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        if pid == os.getpid():  # the client itself (its arguments may name the server)
            continue
        with contextlib.suppress(OSError):
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def server_rss_mb(pids: Sequence[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, StopIteration):
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
            total += int(next(line for line in status if line.startswith("VmRSS")).split()[1])
    return round(total / 1024)


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU of these processes so far (what a store costs, whatever else the machine runs)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def selected() -> list[str]:
    """The stores to run: ``KUBEVEC_BENCH_STORES`` (comma-separated names of STORES), else all."""
    wanted = [name.strip() for name in os.environ.get("KUBEVEC_BENCH_STORES", "").split(",") if name.strip()]
    unknown = sorted(set(wanted) - set(STORES))
    if unknown:
        raise SystemExit(f"KUBEVEC_BENCH_STORES: unknown {', '.join(unknown)} (known: {', '.join(STORES)})")
    return [name for name in STORES if name in wanted] if wanted else list(STORES)


@contextlib.contextmanager
def _servers(names: Sequence[str], tmp: Path) -> Iterator[dict[str, tuple[str, str]]]:
    """The servers the selected stores need, started once: ``{store: (url, password)}``."""
    with contextlib.ExitStack() as stack:
        out: dict[str, tuple[str, str]] = {}
        if "chroma-server" in names:
            (tmp / "chroma-server").mkdir()
            out["chroma-server"] = (stack.enter_context(chroma_server(tmp / "chroma-server")), "")
        if "pgvector" in names:
            postgres = stack.enter_context(postgres_server())
            out["pgvector"] = (postgres.url, postgres.password)
        if "weaviate" in names:
            weaviate = stack.enter_context(weaviate_server())
            out["weaviate"] = (f"{weaviate.url} {weaviate.grpc_port}", "")
        if "redis" in names:
            redis = stack.enter_context(redis_server())
            out["redis"] = (redis.url, redis.password)
        yield out


def collect(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each store measured in a process of its own, one after the other."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, _servers(names, Path(tmp)) as servers:
        for backend in names:
            url, password = servers.get(backend, ("", ""))
            target = Target(backend=backend, tmp=tmp, url=url, password=password)
            print(f"  benchmarking {backend} at {SIZE:,} records ...", file=sys.stderr, flush=True)
            done = subprocess.run(
                [sys.executable, "-m", "tests.bench.stores", "--one", *target.argv()],
                stdout=subprocess.PIPE, stderr=None, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0 or not done.stdout.strip():
                results[backend] = {"failed": f"exit {done.returncode} (its stderr is above)"}
            else:
                results[backend] = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"  {backend}: {json.dumps(results[backend])}", file=sys.stderr, flush=True)
            if backend not in SERVER_MARKERS:  # an embedded store's files (a server's stay until it stops)
                shutil.rmtree(Path(tmp) / backend, ignore_errors=True)
    return results


def tables(results: dict[str, dict[str, Any]]) -> str:
    """The store table (load, open, memory) and the query table (one row per store and filter)."""
    stores, latency = [], []
    for backend, found in results.items():
        if "failed" in found:
            stores.append([backend, "failed", found["failed"], "", "", "", "", "", ""])
            continue
        if backend == "baseline":
            stores.append(["(queries and imports alone)", "", "", "", "", "", found["client_rss_mb"], "", ""])
            continue
        stores.append([
            backend, found["loaded"], found["upserts_per_s"], found.get("upsert_cpu_s_per_1k", ""), found["open_s"],
            found["reader_rss_mb"], found["client_rss_mb"], found["server_rss_mb"], found["stopped"],
        ])  # fmt: skip
        for label, values in found["latencies"].items():
            latency.append([backend, label, *(values.get(key, "") for key in LATENCY_KEYS)])
    return "\n\n".join(
        [
            table(
                [
                    "backend",
                    "records",
                    "upsert rec/s",
                    "upsert CPU s per 1k",
                    "open + first answer s",
                    "reader peak RSS MB",
                    "client peak RSS MB",
                    "server RSS MB",
                    "note",
                ],
                stores,
            ),
            table(
                [
                    "backend",
                    "filter",
                    "queries",
                    "top-10 p50 ms",
                    "p95 ms",
                    "p99 ms",
                    "CPU ms per query",
                    "short of 10",
                ],
                latency,
            ),
        ]
    )


def run() -> str:
    return tables(collect(selected()))


def title() -> str:
    return (
        f"Stores: {SIZE:,} instance-shaped records x {DIM}-d, top-10 filtered on kind=Deployment AND "
        "namespace=team-3 (0.2%), kind in 3 workload kinds (11%), cluster=staging (20%), and unfiltered"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("--one", "--open"):
        target = Target.from_argv(sys.argv[2:])
        result = asyncio.run(measure(target) if sys.argv[1] == "--one" else opening(target))
        print(json.dumps(result))
        return
    print(f"== {title()}")
    print(run())


if __name__ == "__main__":
    main()
