"""``kubevec`` as a new process per call, as an agent's shell tool runs it: with and without the resident reader.

``resident=False`` (``KUBEVEC_CLI_RESIDENT_SECONDS=0``): every call starts from cold (imports, store
open, model load). ``resident=True``: the default; the first call runs in its own process and leaves
a reader behind, the next ones are handed to it as soon as it listens (no pause between calls, so
the second may still run on its own while the reader warms). Each measurement gets a runtime
directory of its own, and its reader is stopped after it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from kubevec.controller.cli import resident

KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def timed_calls(env: dict[str, str], calls: Sequence[Sequence[str]], *, resident_reader: bool) -> list[float]:
    """Seconds of each call, in order (each must exit 0)."""
    runtime = Path(tempfile.mkdtemp(prefix="kv-bench-", dir="/tmp"))  # a socket's path has at most 104 bytes
    env = {**env, "XDG_RUNTIME_DIR": str(runtime), resident.SECONDS_VARIABLE: "120" if resident_reader else "0"}
    times = []
    try:
        for argv in calls:
            started = time.perf_counter()
            subprocess.run([KUBEVEC, *argv], env=env, check=True, capture_output=True)
            times.append(time.perf_counter() - started)
    finally:
        stop_readers(runtime)
        shutil.rmtree(runtime, ignore_errors=True)
    return times


def stop_readers(runtime: Path) -> None:
    for socket_path in runtime.glob("kubevec-*/*.sock"):
        found = subprocess.run(["pgrep", "-f", str(socket_path)], capture_output=True, text=True, check=False)
        for pid in found.stdout.split():
            os.kill(int(pid), signal.SIGTERM)
