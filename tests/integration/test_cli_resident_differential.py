"""The resident reader is invisible: every reading command answers as a process of its own would.

For every embedded store, a sequence that interleaves writes (``kubevec index crds``: new types, a
description changed under the same id) with every reading command, with ``--json`` and without,
errors included: each answer with the reader's settings is byte-identical (exit code, stdout,
stderr) to the same command with the reader off, at once after each write (no interval to wait
out), and a writer run right after a read succeeds. Qdrant's local mode (one process per folder)
and the memory store get no reader at all: the reader held the Qdrant folder and every writer
failed with "already accessed by another instance of Qdrant client" (issue 54).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_CRDS
from tests.resident import Reader, differences, kubevec, runtime_dir, with_reader

pytestmark = pytest.mark.integration

QUESTION = "restore a deleted namespace from last night's backup"
POSTGRES = "managed PostgreSQL with failover"
READS = (
    ("search", QUESTION, "-k", "3"),
    ("search", POSTGRES, "--json", "-k", "4"),
    ("search", POSTGRES, "-o", "name", "--no-hybrid"),
    ("search", QUESTION, "-k", "0"),  # a usage error
    ("search", "zanzibar", "--collection", "instances"),  # a collection nothing wrote
    ("get", "postgresclusters.databases.samples.kubevec.io"),
    ("get", "no-such-id"),
    ("resolve", "pgc"),
    ("resolve", "zzc", "-o", "json"),
    ("related", "Deployment/default/missing"),
    ("facets", "group", "--collection", "capabilities"),
    ("changes", "--json"),
)
#: Embedded stores, and whether a reader may live beside their writers.
STORES = {"chroma": True, "lancedb": True, "qdrant": False, "memory": False}


def zanzibar(tmp_path: Path, *, description: str) -> Path:
    """A CRD of a type nothing else is, with a description of our choosing."""
    crd = SAMPLE_CRDS.read_text().split("\n---")[0]
    assert "kind: PostgresCluster" in crd
    text = (
        crd.replace("postgresclusters", "zanzibarclusters")
        .replace("PostgresCluster", "ZanzibarCluster")
        .replace("postgrescluster", "zanzibarcluster")
        .replace("[pgc]", "[zzc]")
    )
    head, _, rest = text.partition("description: >-\n")
    indent = rest[: len(rest) - len(rest.lstrip())]
    body = rest.split("\n", 1)[1] if rest else ""
    path = tmp_path / "zanzibar.yaml"
    path.write_text(f"{head}description: >-\n{indent}{description}\n{body}")
    return path


@pytest.mark.parametrize(("backend", "shared"), list(STORES.items()))
def test_every_read_answers_as_its_own_process_across_writes(tmp_path: Path, backend: str, *, shared: bool) -> None:
    with runtime_dir() as runtime:
        env = with_reader(
            {**os.environ, "KUBEVEC_STORE__BACKEND": backend, "KUBEVEC_STORE__PATH": str(tmp_path / "store")}, runtime
        )
        env.pop("KUBEVEC_LOG_LEVEL", None)  # the default level: whatever a user would see on stderr
        reader = Reader(env, tmp_path)
        steps = [
            ["index", "crds", str(SAMPLE_CRDS)],
            ["index", "crds", str(zanzibar(tmp_path, description="ZanzibarCluster runs PostgreSQL with failover."))],
        ]
        if backend != "memory":  # nothing a memory store holds outlives the command that wrote it
            steps.append(
                ["index", "crds", str(zanzibar(tmp_path, description="ZanzibarCluster archives tape backups nightly."))]
            )
        for number, write in enumerate(steps):
            written = kubevec(*write, env=env, cwd=tmp_path)  # a writer right after reads, reader alive
            assert written.returncode == 0, (write, written.stderr)
            if number == 0 and shared:  # the first read leaves a reader: the rest are answered by it
                assert kubevec(*READS[0], env=env, cwd=tmp_path).returncode == 0
                reader.wait_ready()
            if shared or number == len(steps) - 1:
                assert differences(READS, env=env, cwd=tmp_path) == [], f"after {write}"
            else:  # no reader: both ways are a process of its own; one read before the next write will do
                read = kubevec(*READS[0], env=env, cwd=tmp_path)  # a memory store holds nothing between commands
                assert read.returncode == (1 if backend == "memory" else 0), read.stderr
        if shared:
            assert reader.alive()
            assert reader.answered() >= len(READS) * len(steps)
            found = kubevec("search", "tape backups nightly", "-o", "name", "-k", "1", env=env, cwd=tmp_path)
            assert found.stdout == "zanzibarclusters.databases.samples.kubevec.io\n"  # the words written last
        else:
            assert not reader.lock.exists(), reader.text()
            assert not reader.socket.exists()
