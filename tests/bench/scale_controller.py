"""The processes ``make bench-scale`` runs and measures: the API client, the controller, the stand-in embedder.

:class:`Api` creates and patches objects through the API server (not kubectl, whose client-side
validation times out past ~140 CRDs); :class:`Controller` is ``kubevec run`` as its own process, read
through its health and metrics ports and ``/proc``; :func:`standin_embedder` serves the fast
OpenAI-compatible stand-in (``tests/doubles/model_servers.py``) in a process of its own, so at 100k
the controller's own cost shows rather than a model's, and the bench's threads do not share its GIL.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.controlplane.cluster import ControlPlane, free_port

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))
#: The stand-in's vector size: the offline model's, so the store holds what a real one would.
STANDIN_DIMENSION = 384


class Api:
    """Just enough of the Kubernetes API for bulk creation (admin token, the apiserver's own CA)."""

    def __init__(self, plane: ControlPlane) -> None:
        self.url = plane.url
        self.headers = {"Authorization": f"Bearer {plane.admin_token}", "Content-Type": "application/json"}
        self.context = ssl.create_default_context(cafile=str(plane.workdir / "certs" / "apiserver.crt"))

    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {**self.headers, "Content-Type": content_type}
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        for attempt in range(10):
            try:
                with urllib.request.urlopen(request, context=self.context, timeout=60) as response:
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as exc:
                if exc.code in (409,):  # exists: fine for a re-run
                    return None
                if exc.code in (429, 500, 503) and attempt < 9:
                    time.sleep(0.5 * (attempt + 1))
                    continue
                raise RuntimeError(f"{method} {path}: HTTP {exc.code} {exc.read()[:300]!r}") from exc
        return None

    def create_all(self, items: list[tuple[str, dict[str, Any]]], *, what: str) -> None:
        done, started = 0, time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            for _ in pool.map(lambda item: self.request("POST", item[0], item[1]), items):
                done += 1
                if done % 1000 == 0 or done == len(items):
                    rate = done / max(time.monotonic() - started, 1e-9)
                    print(f"  created {done}/{len(items)} {what} ({rate:.0f}/s)", file=sys.stderr, flush=True)


class Controller:
    """``kubevec run`` in its own process group, its log in ``workdir``; ``env``: the embedder's settings."""

    def __init__(
        self, plane: ControlPlane, *, store_url: str, workdir: Path, cluster: str, env: dict[str, str]
    ) -> None:
        self.plane, self.store_url, self.workdir, self.cluster = plane, store_url, workdir, cluster
        self.extra = env
        self.health, self.metrics = free_port(), free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Seconds from the process's start to ``/readyz`` answering 200 (progress on stderr meanwhile)."""
        env = {
            **os.environ,
            "KUBECONFIG": str(self.plane.kubeconfig),
            "KUBEVEC_CLUSTER_NAME": self.cluster,
            "KUBEVEC_STORE__URL": self.store_url,
            "KUBEVEC_CACHE_DIR": str(self.workdir / "controller-cache"),
            # the convergence check expects CRD capabilities only (built-ins need the OpenAPI documents)
            "KUBEVEC_SYNC__BUILTIN_CAPABILITIES": "false",
            "KUBEVEC_SERVER__HOST": "127.0.0.1",
            "KUBEVEC_SERVER__HEALTH_PORT": str(self.health),
            "KUBEVEC_SERVER__METRICS_PORT": str(self.metrics),
            "KUBEVEC_LOG_LEVEL": "WARNING",
            **self.extra,
        }
        started = last_said = time.monotonic()
        with open(self.workdir / "kubevec.log", "ab") as log:
            self.proc = subprocess.Popen(
                [KUBEVEC, "run"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        while True:
            assert self.proc.poll() is None, (self.workdir / "kubevec.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.health}/readyz", timeout=5) as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except OSError:
                pass
            if time.monotonic() - last_said >= 30:
                last_said = time.monotonic()
                self.progress(started)
            time.sleep(0.5)

    def progress(self, started: float) -> None:
        try:
            upserts = self.metric("kubevec_upserts_total")
            embedded = self.metric("kubevec_embeddings_computed_total")
        except OSError:
            upserts = embedded = float("nan")
        print(
            f"  ... {time.monotonic() - started:.0f} s: upserts={upserts:.0f} embeddings={embedded:.0f}"
            f" rss={self.peak_rss_mib():.0f} MiB cpu={cpu_seconds(self.pid):.0f} s",
            file=sys.stderr,
            flush=True,
        )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def peak_rss_mib(self) -> float:
        return peak_rss_mib(self.pid)

    def metric(self, name: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=5) as response:
            text = response.read().decode()
        return sum(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith(name + " ") or line.startswith(name + "{")
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=120)


def peak_rss_mib(pid: int) -> float:
    """A live process's peak resident memory (``VmHWM``), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process, all its threads (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def chroma_pid(store_url: str) -> int:
    """The ``chroma run`` process serving ``store_url``."""
    wanted = f"--port\0{store_url.rsplit(':', 1)[1]}\0"
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "chroma" in text and "\0run\0" in text and wanted in text:
            return int(cmdline.parent.name)
    raise RuntimeError(f"no chroma run process serves {store_url}")


def chroma_client(store_url: str) -> Any:
    """A chromadb client of the server at ``store_url``, as the bench reads it behind the controller."""
    import chromadb
    from chromadb.config import Settings

    host, port = store_url.removeprefix("http://").split(":")
    return chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))


class _Forget(list[Any]):
    """A ``received`` list that keeps nothing: 100k texts held for no test would be the stand-in's memory."""

    def append(self, item: Any) -> None:
        pass


def serve_standin(port: int) -> None:
    """Serve the OpenAI-compatible stand-in on ``port`` until killed (the child side of :func:`standin_embedder`)."""
    import asyncio

    from tests.doubles.model_servers import StandIn, running

    async def forever() -> None:
        standin = StandIn("openai", dimension=STANDIN_DIMENSION, received=_Forget())
        async with running(standin, port=port):
            print(f"Serving the stand-in embedder url={standin.url}", flush=True)
            await asyncio.Event().wait()

    asyncio.run(forever())


@contextlib.contextmanager
def standin_embedder(workdir: Path) -> Iterator[dict[str, str]]:
    """The stand-in embedder in its own process; yields the ``KUBEVEC_EMBEDDER__*`` settings that use it."""
    from tests.doubles.model_servers import KEY

    port = free_port()
    with open(workdir / "standin.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", f"from tests.bench.scale_controller import serve_standin; serve_standin({port})"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[2],  # where ``tests`` imports from
        )
    try:
        deadline = time.monotonic() + 60
        while "Serving the stand-in" not in (workdir / "standin.log").read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the stand-in embedder never served: {(workdir / 'standin.log').read_text()}")
            time.sleep(0.2)
        yield {
            "KUBEVEC_EMBEDDER__PROVIDER": "openai",
            "KUBEVEC_EMBEDDER__MODEL": "bge-small-en-v1.5",
            "KUBEVEC_EMBEDDER__BASE_URL": f"http://127.0.0.1:{port}/v1",
            "KUBEVEC_EMBEDDER__API_KEY": KEY,
            "KUBEVEC_EMBEDDER__DIMENSION": str(STANDIN_DIMENSION),
        }
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
