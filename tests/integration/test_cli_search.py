"""`kubevec index crds` and `kubevec search` as a user runs them (subprocesses, real store and model)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import SAMPLE_CRDS
from tests.controlplane.cluster import free_port
from tests.doubles.model_servers import KEY as STANDIN_KEY

pytestmark = pytest.mark.integration
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def kubevec(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KUBEVEC, *args], env=env, capture_output=True, text=True, timeout=300, check=False)


def test_index_then_search(tmp_path: Path) -> None:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "store"), "KUBEVEC_LOG_LEVEL": "WARNING"}
    first = kubevec("index", "crds", str(SAMPLE_CRDS), env=env)
    assert first.returncode == 0, first.stderr
    assert "documents=7 embedded=7 unchanged=0 errors=0" in first.stdout
    again = kubevec("index", "crds", str(SAMPLE_CRDS), env=env)
    assert "embedded=0 unchanged=7" in again.stdout  # unchanged CRDs are never re-embedded
    found = kubevec("search", "restore a deleted namespace from last night's backup", "--json", "-k", "3", env=env)
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)  # nothing but JSON on stdout
    results = answer["results"]
    assert (answer["total"], answer["truncated"], answer["cursor"]) == (7, True, None)  # 7 ranked, 3 shown
    assert found.stderr == ""  # and no library chatter on stderr
    keys = {"id", "score", "score_kind", "similarity", "label", "metadata", "text"}
    assert [set(r) for r in results] == [keys] * 3
    assert {r["score_kind"] for r in results} == {"fused"}
    assert "backupschedules.backup.samples.kubevec.io" in [r["metadata"]["resource"] for r in results]
    keyword = kubevec("search", "--keyword", "snapshot", "--json", env=env)
    assert [r["metadata"]["resource"] for r in json.loads(keyword.stdout)["results"]] == [
        "backupschedules.backup.samples.kubevec.io"
    ]
    grouped = kubevec("search", "--keyword", "PgBouncer", "--group", "databases.samples.kubevec.io", "--json", env=env)
    assert [r["metadata"]["group"] for r in json.loads(grouped.stdout)["results"]] == ["databases.samples.kubevec.io"]
    text = kubevec("search", "autoscale on queue length", "--kind", "QueueScaler", env=env)
    assert text.stdout.startswith("1. queuescalers.autoscaling.samples.kubevec.io")


def test_store_down_or_empty_is_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "empty")}
    empty = kubevec("search", "anything", env=env)
    assert empty.returncode == 1
    assert empty.stderr.strip().count("\n") == 0
    assert "does not exist" in empty.stderr
    down = kubevec("search", "--keyword", "x", env={**env, "KUBEVEC_STORE__URL": f"http://127.0.0.1:{free_port()}"})
    assert down.returncode == 1
    assert "not reachable" in down.stderr
    assert "Traceback" not in down.stderr
    bad = kubevec("search", "x", "--filter", "{not json", env=env)
    assert bad.returncode == 1
    assert "--filter: Filter is not valid JSON" in bad.stderr


def test_a_missing_store_path_is_reported_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "store"
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(missing)}
    for args in (("search", "--keyword", "x"), ("search", "what runs payments"), ("mcp",)):
        result = kubevec(*args, env=env)
        assert result.returncode == 1, args
        assert result.stderr.strip().count("\n") == 0, result.stderr
        assert f"the chroma store at {missing} does not exist" in result.stderr
        assert not missing.exists()
        assert not missing.parent.exists()


def test_a_filter_nested_1000_deep_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "store")}
    deep = '{"$and": [' * 1000 + '{"kind": "x"}' + "]}" * 1000
    result = kubevec("search", "--keyword", "x", "--filter", deep, env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == "kubevec search: --filter: Filter is nested deeper than 8 levels"


def test_get_and_facets(tmp_path: Path) -> None:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "store"), "KUBEVEC_LOG_LEVEL": "WARNING"}
    assert kubevec("index", "crds", str(SAMPLE_CRDS), env=env).returncode == 0
    crd = "backupschedules.backup.samples.kubevec.io"
    # Only capabilities exist in this store: get looks in both and says where it found the id.
    text = kubevec("get", crd, env=env)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"id: {crd}@")  # a capability by its resource name: the record all clusters share
    assert "\ncollection: capabilities\n" in text.stdout
    assert "capabilities: backup and restore, " in text.stdout
    document = json.loads(kubevec("get", crd, "-o", "json", env=env).stdout)
    assert (document["metadata"]["resource"], document["collection"], document["metadata"]["kind"]) == (
        crd,
        "capabilities",
        "BackupSchedule",
    )
    assert "cron schedule" in document["text"]
    missing = kubevec("get", "no/such/id", env=env)
    assert (missing.returncode, missing.stdout) == (1, "")
    assert "no document 'no/such/id' in instances or capabilities" in missing.stderr
    facets = kubevec("facets", "group", "--collection", "capabilities", "-o", "json", env=env)
    assert json.loads(facets.stdout) == {
        "databases.samples.kubevec.io": 2,
        "pki.samples.kubevec.io": 2,
        "autoscaling.samples.kubevec.io": 1,
        "backup.samples.kubevec.io": 1,
        "messaging.samples.kubevec.io": 1,
    }
    lines = kubevec("facets", "group", "--collection", "capabilities", "--limit", "1", env=env).stdout.splitlines()
    assert lines == ["2  databases.samples.kubevec.io"]
    resolved = kubevec("resolve", "PGC", env=env)
    assert resolved.stdout.startswith("PostgresCluster  databases.samples.kubevec.io/v1  resource=postgresclusters")
    assert "[exact]" in resolved.stdout
    no_instances = kubevec("facets", "kind", env=env)
    assert no_instances.returncode == 1
    assert "does not exist" in no_instances.stderr


def test_kubectl_habits(tmp_path: Path) -> None:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "store"), "KUBEVEC_LOG_LEVEL": "WARNING"}
    assert kubevec("index", "crds", str(SAMPLE_CRDS), env=env).returncode == 0
    names = kubevec("search", "managed postgres database", "-o", "name", "-k", "3", env=env)
    assert names.stdout.splitlines()[0] == "postgresclusters.databases.samples.kubevec.io"
    assert len(names.stdout.splitlines()) == 3
    as_yaml = yaml.safe_load(kubevec("search", "managed postgres database", "-o", "yaml", "-k", "2", env=env).stdout)
    assert [r["metadata"]["resource"] for r in as_yaml["results"]] == names.stdout.splitlines()[:2]
    assert as_yaml["results"][0]["score_kind"] == "fused"
    assert as_yaml["total"] == 7
    assert names.stderr.startswith("Showing 3 of 7")  # ids alone on stdout, the rest said on stderr
    wide = kubevec("search", "managed postgres database", "-o", "wide", "-k", "5", env=env).stdout
    compact = kubevec("search", "managed postgres database", "-k", "5", env=env).stdout
    assert len(wide) > len(compact)  # whole texts, no token budget
    assert " ..." not in wide
    # -l takes kubectl's comma-separated selector; --json is -o json
    by_filter = kubevec("search", "--filter", '{"kind": "Certificate"}', "-l", "x=1,y=2", "--json", env=env)
    assert by_filter.returncode == 0, by_filter.stderr
    assert json.loads(by_filter.stdout)["results"] == []  # no sample CRD has both labels: both conditions applied
    both = kubevec("search", "x", "-n", "a", "-A", env=env)
    assert both.returncode == 2
    assert "not allowed with argument -n/--namespace" in both.stderr


def test_status_without_a_cluster(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "KUBEVEC_STORE__PATH": str(tmp_path / "store"),
        "KUBEVEC_LOG_LEVEL": "WARNING",
        "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
    }
    assert kubevec("index", "crds", str(SAMPLE_CRDS), env=env).returncode == 0
    text = kubevec("status", env=env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == f"Store:        chroma at {tmp_path / 'store'} (healthy)"
    assert lines[2] == "capabilities: 7 documents, built with all-MiniLM-L6-v2-int8 (384 dimensions)"
    assert "PostgresCluster 1" in lines[3]
    assert lines[4] == "instances:    not created yet (instances)"
    assert lines[5] == "changes:      none recorded yet (changes; the controller records them)"
    assert lines[6] == "Controller:   no status record in the store (no controller has written to it yet)"
    assert lines[7].startswith("Cluster:      not reachable from here (")
    report = json.loads(kubevec("status", "-o", "json", env=env).stdout)
    assert report["collections"]["capabilities"]["documents"] == 7
    assert report["collections"]["capabilities"]["kinds"]["Certificate"] == 1
    assert report["cluster"]["reachable"] is False
    down = kubevec("status", env={**env, "KUBEVEC_STORE__URL": f"http://127.0.0.1:{free_port()}"})
    assert down.returncode == 1
    assert "(NOT healthy: " in down.stdout


@contextlib.contextmanager
def voyage_in_a_thread() -> Iterator[str]:
    """A Voyage stand-in (embeddings and rerank) on its own loop, for subprocesses to call; yields its base URL."""
    from tests.doubles.model_servers import StandIn, in_a_thread

    with in_a_thread(StandIn("voyage", dimension=1024)) as standin:
        yield standin.url


def test_migrate_to_another_model_switches_readers_and_is_idempotent(tmp_path: Path) -> None:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "store"), "KUBEVEC_LOG_LEVEL": "WARNING"}
    assert kubevec("index", "crds", str(SAMPLE_CRDS), env=env).returncode == 0
    with voyage_in_a_thread() as url:
        voyage = {**env, "KUBEVEC_EMBEDDER__API_KEY": STANDIN_KEY, "KUBEVEC_EMBEDDER__BASE_URL": url}
        refused = kubevec("search", "nightly backup", env={**voyage, "KUBEVEC_EMBEDDER__PROVIDER": "voyage"})
        assert refused.returncode == 1
        assert "was built with embedder" in refused.stderr
        moved = kubevec("migrate", env={**voyage, "KUBEVEC_EMBEDDER__PROVIDER": "voyage"})
        assert moved.returncode == 0, moved.stderr
        assert "to generation 1 (voyage:voyage-4" in moved.stdout
        assert ": 7 embedded, 0 already copied, 0 removed" in moved.stdout
        assert "Migrating capabilities: 7/7 records" in moved.stderr
        found = kubevec("search", "nightly backup", "--json", env={**voyage, "KUBEVEC_EMBEDDER__PROVIDER": "voyage"})
        assert found.returncode == 0, found.stderr
        results = json.loads(found.stdout)["results"]
        assert results
        assert all(r["metadata"]["resource"].endswith(".samples.kubevec.io") for r in results)
        # A reader still configured for the local model follows the pointer to the model that built the
        # collections (here with the Voyage key it has), instead of failing on mixed embedders.
        follower = kubevec("search", "nightly backup", "--json", "-k", "2", env=voyage)
        assert follower.returncode == 0, follower.stderr
        assert len(json.loads(follower.stdout)["results"]) == 2
        status = json.loads(kubevec("status", "-o", "json", env=voyage).stdout)
        assert status["collections"]["capabilities"]["name"] == "capabilities__g1"
        assert status["collections"]["capabilities"]["documents"] == 7
        again = kubevec("migrate", env={**voyage, "KUBEVEC_EMBEDDER__PROVIDER": "voyage"})
        assert again.returncode == 0, again.stderr
        assert "Nothing to migrate: generation 1 already uses voyage:voyage-4" in again.stdout
    keyword = kubevec("search", "--keyword", "snapshot", "--json", env=env)  # no model needed
    assert [r["metadata"]["resource"] for r in json.loads(keyword.stdout)["results"]] == [
        "backupschedules.backup.samples.kubevec.io"
    ]


def test_index_after_a_migration_writes_the_active_generation(tmp_path: Path) -> None:
    """issue 31: `kubevec index` wrote into generation 0's collection after a migration: it reported
    `embedded=1`, but `status` still counted the old documents and `get` found nothing."""
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "store"), "KUBEVEC_LOG_LEVEL": "WARNING"}
    assert kubevec("index", "crds", str(SAMPLE_CRDS), env=env).returncode == 0
    more = tmp_path / "more.yaml"
    more.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "lighthouses.coast.example.com"},
                "spec": {
                    "group": "coast.example.com",
                    "scope": "Namespaced",
                    "names": {"plural": "lighthouses", "singular": "lighthouse", "kind": "Lighthouse"},
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": True,
                            "schema": {
                                "openAPIV3Schema": {
                                    "type": "object",
                                    "description": "A lighthouse that guides ships along the coast at night.",
                                }
                            },
                        }
                    ],
                },
            }
        )
    )
    with voyage_in_a_thread() as url:
        voyage = {
            **env,
            "KUBEVEC_EMBEDDER__API_KEY": STANDIN_KEY,
            "KUBEVEC_EMBEDDER__BASE_URL": url,
            "KUBEVEC_EMBEDDER__PROVIDER": "voyage",
        }
        assert kubevec("migrate", env=voyage).returncode == 0
        indexed = kubevec("index", "crds", str(more), env=voyage)
        assert indexed.returncode == 0, indexed.stderr
        assert "embedded=1" in indexed.stdout
        got = kubevec("get", "lighthouses.coast.example.com", "-o", "json", env=voyage)
        assert got.returncode == 0, got.stderr
        assert json.loads(got.stdout)["metadata"]["resource"] == "lighthouses.coast.example.com"
        status = json.loads(kubevec("status", "-o", "json", env=voyage).stdout)
        assert status["collections"]["capabilities"]["name"] == "capabilities__g1"
        assert status["collections"]["capabilities"]["documents"] == 8
        found = kubevec("search", "ships along the coast", "--json", "-k", "1", env=voyage)
        assert [r["metadata"]["resource"] for r in json.loads(found.stdout)["results"]] == [
            "lighthouses.coast.example.com"
        ]


def test_search_with_the_voyage_reranker_and_without(tmp_path: Path) -> None:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(tmp_path / "store"), "KUBEVEC_LOG_LEVEL": "WARNING"}
    assert kubevec("index", "crds", str(SAMPLE_CRDS), env=env).returncode == 0
    with voyage_in_a_thread() as url:
        rerank = {
            **env,
            "KUBEVEC_RERANKER__PROVIDER": "voyage",
            "KUBEVEC_RERANKER__API_KEY": STANDIN_KEY,
            "KUBEVEC_RERANKER__BASE_URL": url,
        }
        found = kubevec("search", "nightly backup schedule", "--json", "-k", "3", env=rerank)
        assert found.returncode == 0, found.stderr
        results = json.loads(found.stdout)["results"]
        assert [r["score_kind"] for r in results] == ["rerank"] * 3
        assert results[0]["metadata"]["resource"] == "backupschedules.backup.samples.kubevec.io"
        scores = [r["score"] for r in results]
        assert scores == sorted(scores, reverse=True)
        plain = kubevec("search", "nightly backup schedule", "--json", "-k", "3", "--no-rerank", env=rerank)
        assert {r["score_kind"] for r in json.loads(plain.stdout)["results"]} == {"fused"}
    missing = kubevec("search", "backup", env={**env, "KUBEVEC_RERANKER__PROVIDER": "voyage"})
    assert missing.returncode == 1
    assert "KUBEVEC_RERANKER__API_KEY" in missing.stderr
