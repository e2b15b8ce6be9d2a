"""The readers over the store ``make bench-scale`` built: the resident CLI reader and ``kubevec mcp`` (stdio).

Issue 50 measured, at 100k objects: the first ``kubevec search`` in its own process, the resident
reader's first answer after it started and its time per search (twice over the questions: the first
pass while a new machine's keyword index is built, the second as the reader stays), ``kubevec mcp``'s
initialize, its first answer and time per search (the same two passes), each reader's peak RSS, and ``kubevec --help``'s CPU seconds.
These run the commands as a user does (real processes, the official ``mcp`` SDK client over stdio),
every search over the instances collection (the 100,000 objects; the default, capabilities, holds the
types), each reader with a cache directory of its own and empty (a fresh start: no keyword index saved by
another), against the store the controller wrote: the Chroma server, or, after it stopped, its
directory opened embedded.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubevec.controller.cli import resident
from tests.bench.report import percentile
from tests.bench.scale_controller import KUBEVEC, peak_rss_mib
from tests.resident import Reader

#: Seconds a reader may take to answer its first question before the bench gives up on it.
FIRST_ANSWER_TIMEOUT = 900.0
K = 10


def search_argv(question: str) -> list[str]:
    """``kubevec search`` over the instances (the default collection, capabilities, holds the types)."""
    return [KUBEVEC, "search", question, "--collection", "instances", "-k", str(K), "-o", "name"]


def questions(*, objects: int) -> list[str]:
    """~30 questions a user would ask of the bench's objects (teams, tiers, apps svcN, widgets wN, configmaps cmN)."""
    last = max(0, objects - 2)
    return [
        "payments api in prod",
        "pods that crash",
        "which service exposes widget-17",
        "config of the orders worker",
        "ledger database",
        "identity team api",
        "search worker configuration",
        "widgets owned by payments",
        f"w{last - last % 2}",
        "cm101",
        "log level info configmap",
        "order pipeline widget with size 3",
        "endpoint https://svc42.example",
        "svc7 configuration",
        "which widgets talk to svc13",
        "orders db tier",
        "Widget4 in ns03",
        "feature flags turned on",
        "replicas: 2 config",
        "payments team workers in ns11",
        "what runs the order pipeline",
        "custom resources of scale.kubevec.bench",
        "configmaps in namespace ns07",
        "identity db",
        "widget with endpoint svc96",
        "the ledger api",
        "search api in ns19",
        "app svc88 tier worker",
        "Widget9 owned by orders",
        "config maps for svc50",
    ]


def timed(argv: list[str], *, env: Mapping[str, str], cwd: Path) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MiB, exit code) of one command in its own process (``wait4``)."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=dict(env), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def help_cpu(*, env: Mapping[str, str]) -> float:
    """The least CPU seconds of five ``kubevec --help`` (the least: what the command costs, not the machine's noise)."""
    with tempfile.TemporaryDirectory() as here:
        return min(timed([KUBEVEC, "--help"], env=env, cwd=Path(here))[1] for _ in range(5))


def say(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


def resident_reader(env: Mapping[str, str], *, workdir: Path, asked: list[str], store: str) -> dict[str, float]:
    """The first ``kubevec search`` (own process, it leaves the reader), the reader's first answer, then ``asked``."""
    runtime = Path(tempfile.mkdtemp(prefix="kv-", dir="/tmp"))  # short: a socket's path has at most 104 bytes
    cwd = workdir / f"resident-{store}"
    cwd.mkdir()
    env = {
        **env,
        "XDG_RUNTIME_DIR": str(runtime),
        resident.SECONDS_VARIABLE: "1800",
        "KUBEVEC_CACHE_DIR": str(cwd / "cache"),
    }
    reader = Reader(env, cwd)
    out: dict[str, float] = {}
    try:
        say(f"{store}: first kubevec search, in its own process ...")
        wall, _, _, code = timed(search_argv(asked[0]), env=env, cwd=cwd)
        assert code == 0, f"kubevec search failed: exit {code}"
        out[f"{store}.search.one_shot_s"] = wall
        launched = time.monotonic()
        say(f"{store}: the resident reader, until its first answer ...")
        while reader.answered() == 0:
            assert time.monotonic() - launched < FIRST_ANSWER_TIMEOUT, f"no answer from the reader: {reader.text()}"
            if "Resident reader ready" in reader.text():
                timed(search_argv(asked[0]), env=env, cwd=cwd)
            else:
                time.sleep(0.2)
        out[f"{store}.resident.first_answer_s"] = time.monotonic() - launched
        times = []
        for question in asked * 2:
            before = reader.answered()
            wall, _, _, code = timed(search_argv(question), env=env, cwd=cwd)
            if code != 0 or reader.answered() != before + 1:
                raise RuntimeError(f"not answered by the reader: {question!r} (exit {code})")
            times.append(wall)
        out.update(passes(times, prefix=f"{store}.resident"))
        out[f"{store}.resident.peak_rss_mib"] = peak_rss_mib(pid_of(str(reader.socket)))
    finally:
        subprocess.run([KUBEVEC, "resident", "stop"], env=env, cwd=cwd, capture_output=True, check=False)
        shutil.rmtree(runtime, ignore_errors=True)
    return out


def passes(times: list[float], *, prefix: str) -> dict[str, float]:
    """p50 and p95 of the first pass over the questions ("fresh": a reader of a new machine builds the
    keyword index meanwhile, ~25 s at 100,000, on the same cores) and of the second (the reader as it
    stays)."""
    half = len(times) // 2
    first, second = times[:half], times[half:]
    return {
        f"{prefix}.fresh_p50_s": percentile(first, 50),
        f"{prefix}.fresh_p95_s": percentile(first, 95),
        f"{prefix}.p50_s": percentile(second, 50),
        f"{prefix}.p95_s": percentile(second, 95),
    }


def pid_of(argument: str) -> int:
    """The process whose arguments include ``argument``."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if argument.encode() in cmdline.read_bytes().split(b"\0"):
                return int(cmdline.parent.name)
        except OSError:
            continue
    raise RuntimeError(f"no process has the argument {argument}")


def child_mcp() -> int:
    """This process's ``kubevec mcp`` child (the SDK client started it)."""
    mine = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = stat.read_text().rsplit(")", 1)[1].split()[1]
            argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if ppid == mine and b"mcp" in argv:
            return int(stat.parent.name)
    raise RuntimeError("no kubevec mcp process")


def mcp_server(env: Mapping[str, str], *, workdir: Path, asked: list[str], store: str) -> dict[str, float]:
    """``kubevec mcp`` over stdio from a fresh start: initialize, first answer, then ``asked``; its peak RSS."""
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    cache = workdir / f"mcp-{store}-cache"
    server = StdioServerParameters(command=KUBEVEC, args=["mcp"], env={**env, "KUBEVEC_CACHE_DIR": str(cache)})

    async def search(client: Any, question: str) -> None:
        result = await client.call_tool("vector_search", {"query": question, "k": K, "collection": "instances"})
        assert not result.is_error, result

    async def run() -> dict[str, float]:
        out: dict[str, float] = {}
        say(f"{store}: kubevec mcp (stdio), until its first answer ...")
        started = time.monotonic()
        async with Client(server) as client:
            out[f"{store}.mcp.initialize_s"] = time.monotonic() - started
            await search(client, asked[0])
            out[f"{store}.mcp.first_answer_s"] = time.monotonic() - started
            times = []
            for question in asked * 2:
                began = time.monotonic()
                await search(client, question)
                times.append(time.monotonic() - began)
            out.update(passes(times, prefix=f"{store}.mcp"))
            out[f"{store}.mcp.peak_rss_mib"] = peak_rss_mib(child_mcp())
        return out

    return asyncio.run(run())


def readers(env: Mapping[str, str], *, workdir: Path, objects: int, store: str) -> dict[str, float]:
    """Both readers over one store (``env`` names it and the embedder); a reader that fails is reported, not fatal."""
    asked = questions(objects=objects)
    out: dict[str, float] = {}
    for measure in (resident_reader, mcp_server):
        try:
            out.update(measure(env, workdir=workdir, asked=asked, store=store))
        except Exception as exc:  # the figures of the others are still worth having
            say(f"{store}: {measure.__name__} failed: {type(exc).__name__}: {str(exc)[:500]}")
    return out
