"""Real helper services for tests and benchmarks (never mocks)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.controlplane.cluster import free_port


@contextlib.contextmanager
def chroma_server(data_dir: Path | None = None, *, port: int | None = None) -> Iterator[str]:
    """Run the `chroma` CLI that ships with the chromadb wheel on a loopback port; yield its URL."""
    chroma = Path(sys.executable).with_name("chroma")
    port = port or free_port()
    data = data_dir or Path(tempfile.mkdtemp(prefix="kubevec-chroma-"))
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "CHROMA_TELEMETRY_IMPL": "none"}
    with open(data / "server.log", "ab") as log:
        proc = subprocess.Popen(
            [str(chroma), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"chroma run exited: {(data / 'server.log').read_text()[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise TimeoutError("chroma run did not answer within 60s") from None
                    time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
