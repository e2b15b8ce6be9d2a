"""The CLI as a user runs it, with and without its resident reader: shared by the integration and e2e tests.

Each test gets a runtime directory of its own (``XDG_RUNTIME_DIR``, short: a socket's path has at
most 104 bytes), so its readers are its own, and stops them when it ends.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from kubevec.controller.cli import resident

KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def kubevec(*args: str, env: Mapping[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBEVEC, *args], env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def outcome(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """What a user sees of a command: exit code, stdout, stderr."""
    return done.returncode, done.stdout, done.stderr


class Reader:
    """Where the reader for ``env`` and ``cwd`` lives, and what its log says."""

    def __init__(self, env: Mapping[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        directory = Path(env["XDG_RUNTIME_DIR"]) / f"kubevec-{os.getuid()}"
        self.socket, self.lock, self.log = resident.paths(directory, resident.key(env, cwd=str(cwd)))

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while "Resident reader ready" not in self.text() or not self.socket.exists():
            assert time.monotonic() < deadline, f"no resident reader: {self.text()}"
            time.sleep(0.2)

    def wait_gone(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while self.socket.exists() or resident.held(self.lock):
            assert time.monotonic() < deadline, f"the resident reader is still there: {self.text()}"
            time.sleep(0.2)

    def alive(self) -> bool:
        return resident.held(self.lock)

    def answered(self) -> int:
        return self.text().count("Answered a command")

    def text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def stop(self) -> None:
        subprocess.run(["pkill", "-f", str(self.socket)], check=False)


@contextlib.contextmanager
def runtime_dir() -> Iterator[Path]:
    """A runtime directory of the test's own; every reader started in it is stopped at the end."""
    runtime = Path(tempfile.mkdtemp(prefix="kv-", dir="/tmp"))
    try:
        yield runtime
    finally:
        # every reader started here, ready or still starting (its arguments name its socket in here)
        subprocess.run(["pkill", "-f", f"resident_server {runtime}/"], check=False)
        shutil.rmtree(runtime, ignore_errors=True)


def with_reader(env: Mapping[str, str], runtime: Path, *, seconds: int = 120) -> dict[str, str]:
    """``env`` with the resident reader on (its default for users), its sockets in ``runtime``."""
    return {**env, "XDG_RUNTIME_DIR": str(runtime), resident.SECONDS_VARIABLE: str(seconds)}


def without_reader(env: Mapping[str, str]) -> dict[str, str]:
    return {**env, resident.SECONDS_VARIABLE: "0"}


def differences(reads: Sequence[Sequence[str]], *, env: Mapping[str, str], cwd: Path) -> list[str]:
    """Each read run with the reader's settings and in a process of its own; how the ones that differ differ."""
    out = []
    for args in reads:
        warm = outcome(kubevec(*args, env=env, cwd=cwd))
        own = outcome(kubevec(*args, env=without_reader(env), cwd=cwd))
        if warm != own:
            lines = difflib.unified_diff(
                f"exit {own[0]}\n{own[1]}{own[2]}".splitlines(),
                f"exit {warm[0]}\n{warm[1]}{warm[2]}".splitlines(),
                "own process",
                "resident reader",
                lineterm="",
                n=1,
            )
            out.append(f"{' '.join(args)}:\n" + "\n".join(list(lines)[:40]))
    return out
