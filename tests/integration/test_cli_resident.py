"""The resident reader behind the reading commands, as a user meets it: real processes, store and model.

The first ``kubevec search`` runs in its own process and leaves a reader behind; the next ones with
the same settings are answered by it, byte for byte what a process of their own would print, and it
keeps up with what another process writes. Each test gives the reader a runtime directory of its own
and stops it at the end (the suite turns the reader off everywhere else: tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubevec.controller.cli import resident
from tests.conftest import SAMPLE_CRDS
from tests.resident import Reader, kubevec, runtime_dir

pytestmark = pytest.mark.integration
QUESTION = "restore a deleted namespace from last night's backup"


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """A store with the sample CRDs, and the environment that reads it with the reader on."""
    with runtime_dir() as runtime:
        env = {
            **os.environ,
            "KUBEVEC_STORE__PATH": str(tmp_path / "store"),
            "KUBEVEC_LOG_LEVEL": "WARNING",
            "XDG_RUNTIME_DIR": str(runtime),
            resident.SECONDS_VARIABLE: "60",
        }
        built = kubevec("index", "crds", str(SAMPLE_CRDS), env=env, cwd=tmp_path)
        assert built.returncode == 0, built.stderr
        yield env, tmp_path


def test_the_next_commands_are_answered_by_the_reader_the_first_left(indexed: tuple[dict[str, str], Path]) -> None:
    env, cwd = indexed
    reader = Reader(env, cwd)
    first = kubevec("search", QUESTION, "-k", "3", env=env, cwd=cwd)
    assert first.returncode == 0, first.stderr
    reader.wait_ready()
    again = kubevec("search", QUESTION, "-k", "3", env=env, cwd=cwd)
    assert reader.answered() == 1
    assert (again.returncode, again.stdout, again.stderr) == (first.returncode, first.stdout, first.stderr)

    # the same for JSON, an error (exit code and one line on stderr) and a usage error, as a process of its own
    here = {**env, resident.SECONDS_VARIABLE: "0"}
    for args in (
        ["search", QUESTION, "--json", "-k", "2"],
        ["get", "no-such-id"],
        ["search", QUESTION, "-k", "0"],
        ["related", "Deployment/default/missing"],
    ):
        warm, own = kubevec(*args, env=env, cwd=cwd), kubevec(*args, env=here, cwd=cwd)
        assert (warm.returncode, warm.stdout, warm.stderr) == (own.returncode, own.stdout, own.stderr), args
    assert reader.answered() == 5
    assert json.loads(kubevec("search", QUESTION, "--json", env=env, cwd=cwd).stdout)["results"]
    stopped = kubevec("resident", "stop", env=env, cwd=cwd)
    assert (stopped.returncode, stopped.stdout) == (0, "Stopped resident readers count=1\n")
    reader.wait_gone()


def test_other_settings_are_never_answered_by_this_reader(indexed: tuple[dict[str, str], Path]) -> None:
    env, cwd = indexed
    reader = Reader(env, cwd)
    assert kubevec("search", QUESTION, env=env, cwd=cwd).returncode == 0
    reader.wait_ready()
    other = {**env, "KUBEVEC_CLUSTER_NAME": "elsewhere"}
    assert kubevec("search", QUESTION, env=other, cwd=cwd).returncode == 0
    assert reader.answered() == 0
    assert Reader(other, cwd).socket != reader.socket
    Reader(other, cwd).wait_ready()  # it left one of its own
    Reader(other, cwd).stop()
    reader.stop()


def test_the_reader_sees_what_another_process_writes_and_goes_with_its_store(
    indexed: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, cwd = indexed
    reader = Reader(env, cwd)
    assert kubevec("search", QUESTION, env=env, cwd=cwd).returncode == 0
    reader.wait_ready()
    extra = tmp_path / "extra.yaml"
    crd = SAMPLE_CRDS.read_text().split("\n---")[0]
    assert "kind: PostgresCluster" in crd
    extra.write_text(
        crd.replace("postgresclusters", "zanzibarclusters")
        .replace("PostgresCluster", "ZanzibarCluster")
        .replace("postgrescluster", "zanzibarcluster")
        .replace("[pgc]", "[zzc]")
    )
    written = kubevec("index", "crds", str(extra), env=env, cwd=cwd)  # another process writes the store
    assert written.returncode == 0, written.stderr
    # at once, by meaning and by words alike: the write stamp tells the reader, no interval to wait out
    for flags in ((), ("--no-hybrid",)):
        found = kubevec("search", "managed PostgreSQL", *flags, "-o", "name", env=env, cwd=cwd).stdout
        assert "zanzibarclusters" in found, flags
    assert reader.answered() >= 1

    shutil.rmtree(env["KUBEVEC_STORE__PATH"])
    gone = kubevec("search", QUESTION, env=env, cwd=cwd)
    assert gone.returncode == 1  # said by the command's own process:
    assert "does not exist" in gone.stderr
    reader.wait_gone()
    assert not Path(env["KUBEVEC_STORE__PATH"]).exists()  # nothing recreated an empty store in its place


def test_the_reader_drops_a_caller_that_sends_nothing_or_too_much(indexed: tuple[dict[str, str], Path]) -> None:
    env, cwd = indexed
    reader = Reader(env, cwd)
    assert kubevec("search", QUESTION, env=env, cwd=cwd).returncode == 0
    reader.wait_ready()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.connect(str(reader.socket))
        silent.sendall(resident.FRAME.pack(10))  # half a request, then nothing
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as huge:
            huge.connect(str(reader.socket))
            huge.sendall(resident.FRAME.pack(1 << 30))
            huge.settimeout(30)
            assert huge.recv(1) == b""  # closed unread, at once
        silent.settimeout(30)
        started = time.monotonic()
        assert silent.recv(1) == b""  # closed after the read timeout
        assert time.monotonic() - started < 25
    again = kubevec("search", QUESTION, env=env, cwd=cwd)
    assert again.returncode == 0
    assert reader.answered() == 1  # and it still answers


def test_an_idle_reader_exits_and_zero_turns_it_off(indexed: tuple[dict[str, str], Path]) -> None:
    env, cwd = indexed
    short = {**env, resident.SECONDS_VARIABLE: "3"}
    reader = Reader(short, cwd)
    assert kubevec("search", QUESTION, env=short, cwd=cwd).returncode == 0
    reader.wait_ready()
    reader.wait_gone(timeout=60)
    off = {**env, resident.SECONDS_VARIABLE: "0"}
    assert kubevec("search", QUESTION, env=off, cwd=cwd).returncode == 0
    time.sleep(1)
    assert not Reader(off, cwd).socket.exists()
    assert not Reader(off, cwd).log.exists()
