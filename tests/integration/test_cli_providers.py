"""`kubevec index` / `search` / `migrate` with each embedding provider, against its stand-in (never the internet).

What a team does on its first day with its own model server: index, search, lose the server (search
still answers, from keywords, and says so), move the store to another provider of another size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLE_CRDS
from tests.doubles.model_servers import AWS_ACCESS_KEY, KEY, StandIn, in_a_thread

pytestmark = pytest.mark.integration
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))

#: provider case -> (stand-in dialect, KUBEVEC_EMBEDDER__* beyond the URL)
PROVIDERS: dict[str, tuple[str, dict[str, str]]] = {
    "openai": ("openai", {"PROVIDER": "openai", "MODEL": "bge-small-en-v1.5", "API_KEY": KEY}),
    "azure": ("azure", {"PROVIDER": "openai", "MODEL": "embed-prod", "API_KEY": KEY, "API_VERSION": "2024-10-21"}),
    "cohere": ("cohere", {"PROVIDER": "cohere", "MODEL": "embed-english-v3.0", "API_KEY": KEY}),
    "gemini": ("gemini", {"PROVIDER": "gemini", "MODEL": "gemini-embedding-001", "API_KEY": KEY}),
    "bedrock": ("bedrock", {"PROVIDER": "bedrock", "MODEL": "amazon.titan-embed-text-v2:0", "REGION": "us-east-1"}),
}
AWS = {
    "AWS_ACCESS_KEY_ID": AWS_ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": "standin-secret-access-key-0000000000000",
    "AWS_CONFIG_FILE": "/nonexistent",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def kubevec(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KUBEVEC, *args], env=env, capture_output=True, text=True, timeout=300, check=False)


def provider_env(tmp_path: Path, case: str, standin: StandIn) -> dict[str, str]:
    _, settings = PROVIDERS[case]
    env = {
        **os.environ,
        **AWS,
        "KUBEVEC_STORE__PATH": str(tmp_path / "store"),
        "KUBEVEC_LOG_LEVEL": "WARNING",
        "KUBEVEC_EMBEDDER__BASE_URL": standin.url,
        "KUBEVEC_EMBEDDER__DIMENSION": str(standin.dimension),
        "KUBEVEC_EMBEDDER__MAX_ATTEMPTS": "2",
        "KUBEVEC_EMBEDDER__TIMEOUT_SECONDS": "5",
    }
    env.update({f"KUBEVEC_EMBEDDER__{key}": value for key, value in settings.items()})
    return env


@pytest.mark.parametrize("case", sorted(PROVIDERS))
def test_index_search_and_lose_the_server(case: str, tmp_path: Path) -> None:
    standin = StandIn(dialect=PROVIDERS[case][0])
    with in_a_thread(standin):
        env = provider_env(tmp_path, case, standin)
        indexed = kubevec("index", "crds", str(SAMPLE_CRDS), env=env)
        assert indexed.returncode == 0, indexed.stderr
        assert "documents=7 embedded=7 unchanged=0 errors=0" in indexed.stdout
        again = kubevec("index", "crds", str(SAMPLE_CRDS), env=env)
        assert "embedded=0 unchanged=7" in again.stdout  # the content hash spares the server too
        sent = len(standin.texts)
        found = kubevec("search", "nightly backup of a namespace", "--json", "-k", "7", env=env)
        assert found.returncode == 0, found.stderr
        assert found.stderr == ""
        results = json.loads(found.stdout)["results"]
        assert len(results) == 7
        assert {r["score_kind"] for r in results} == {"fused"}
        assert standin.texts[sent:] == ["nightly backup of a namespace"]  # one query, embedded by the server
        status = json.loads(kubevec("status", "-o", "json", env=env).stdout)
        assert status["collections"]["capabilities"]["documents"] == 7
    # The server is gone: the same question is answered from its words, and says so.
    down = kubevec("search", "nightly backup of a namespace", "--json", "-k", "3", env=env)
    assert down.returncode == 0, down.stderr
    assert "kubevec search: warning: the embedder is unavailable" in down.stderr
    assert "answered from keywords alone" in down.stderr
    degraded = json.loads(down.stdout)["results"]
    assert degraded[0]["metadata"]["resource"] == "backupschedules.backup.samples.kubevec.io"
    assert {r["score_kind"] for r in degraded} == {"keyword"}
    assert KEY not in down.stderr


def test_migrate_between_two_providers_of_different_sizes(tmp_path: Path) -> None:
    with (
        in_a_thread(StandIn(dialect="openai", dimension=16)) as openai,
        in_a_thread(StandIn(dialect="cohere", dimension=24)) as cohere,
    ):
        before = provider_env(tmp_path, "openai", openai)
        assert kubevec("index", "crds", str(SAMPLE_CRDS), env=before).returncode == 0
        after: dict[str, Any] = {
            **{k: v for k, v in before.items() if not k.startswith("KUBEVEC_EMBEDDER__")},
            **provider_env(tmp_path, "cohere", cohere),
            "KUBEVEC_EMBEDDER__DIMENSION": "24",
        }
        refused = kubevec("search", "nightly backup", env=after)
        assert refused.returncode == 1
        assert "migrate" in refused.stderr
        moved = kubevec("migrate", env=after)
        assert moved.returncode == 0, moved.stderr
        assert "to generation 1 (cohere:embed-english-v3.0" in moved.stdout
        assert ": 7 embedded, 0 already copied, 0 removed" in moved.stdout
        assert sorted(cohere.texts) == sorted(openai.texts)  # the stored texts, sent to the new model once
        assert {request.side for request in cohere.received} == {"document"}
        found = kubevec("search", "nightly backup", "--json", "-k", "2", env=after)
        assert found.returncode == 0, found.stderr
        assert len(json.loads(found.stdout)["results"]) == 2
        assert cohere.received[-1].side == "query"
        status = json.loads(kubevec("status", "-o", "json", env=after).stdout)
        assert status["collections"]["capabilities"]["name"] == "capabilities__g1"
        assert status["collections"]["capabilities"]["documents"] == 7


@pytest.mark.parametrize("failure", ["wrong key", "server error", "closed port"])
def test_an_embedder_failure_is_one_line_and_a_non_zero_exit(failure: str, tmp_path: Path) -> None:
    """`kubevec index` printed a traceback on every embedder failure; the key must show nowhere."""
    standin = StandIn(dialect="openai")
    if failure == "server error":
        standin.script = [(500, {}), (500, {})]
    with in_a_thread(standin):
        env = provider_env(tmp_path, "openai", standin)
        if failure == "wrong key":
            env["KUBEVEC_EMBEDDER__API_KEY"] = "sk-wrong-0a9b8c7d6e5f4a3b2c1d0e9f"
        if failure != "closed port":
            indexed = kubevec("index", "crds", str(SAMPLE_CRDS), env=env)
    if failure == "closed port":
        indexed = kubevec("index", "crds", str(SAMPLE_CRDS), env=env)  # the stand-in has stopped: nothing listens
    assert indexed.returncode == 1, indexed.stdout + indexed.stderr
    assert "Traceback" not in indexed.stderr
    lines = [line for line in indexed.stderr.splitlines() if line.startswith("kubevec index:")]
    assert len(lines) == 1, indexed.stderr
    assert "the embedder failed" in lines[0]
    assert KEY not in indexed.stderr
    assert "sk-wrong-0a9b8c7d6e5f4a3b2c1d0e9f" not in indexed.stderr
