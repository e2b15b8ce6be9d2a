"""The image catalogue: what its generator reads from each source, how an image is matched, what ships."""

from __future__ import annotations

import hashlib
import json
import shutil
from importlib import resources
from pathlib import Path

import pytest

from kubevec import inference
from kubevec.controller.sync import documents
from kubevec.inference import catalogue
from kubevec.inference.catalogue import build

CHART = """
annotations:
  images: |
    - name: os-shell
      image: docker.io/bitnami/os-shell:12-debian-12-r51
    - name: redis
      image: docker.io/bitnami/redis:8.2.1-debian-12-r0@sha256:abc
description: Redis(R) is an open source, advanced key-value store. It is often referred
  to as a data structure server.
name: redis
"""

LANDSCAPE = """
landscape:
  - category:
    name: Observability
    subcategories:
      - subcategory:
        name: Tracing
        items:
          - item:
            name: Tempo
            repo_url: https://github.com/grafana/tempo
            description: Grafana Tempo is a high volume, minimal dependency distributed tracing backend
          - item:
            name: Undescribed
            repo_url: https://github.com/someone/thing
          - item:
            name: Elsewhere
            repo_url: https://gitlab.com/someone/else
            description: Not on GitHub, so no image path to guess.
"""


def test_one_line_drops_marks_and_deprecation_and_cuts_long_text_at_a_sentence() -> None:
    assert build.one_line("DEPRECATED; Web-based MongoDB admin\n interface") == "Web-based MongoDB admin interface."
    assert build.one_line("Redis(R) is a store™.") == "Redis is a store."
    long = "First sentence is short. " + "word " * 60
    assert build.one_line(long) == "First sentence is short."
    cut = build.one_line("word " * 60)
    assert cut.endswith("...")
    assert len(cut) <= build.MAX_DESCRIPTION_CHARS
    assert build.one_line("  ") == ""


def test_official_images_come_from_each_folders_short_readme() -> None:
    readmes = {"redis": "Redis is a store.\n", "Empty": "\n"}
    assert build.official_images(readmes) == {"redis": "Redis is a store."}


def test_a_bitnami_chart_describes_the_image_named_like_it_not_its_sidecars() -> None:
    assert build.bitnami_images({"redis": CHART, "undescribed": "name: undescribed"}) == {
        "bitnami/redis": "Redis is an open source, advanced key-value store. It is often referred to as a data structure server."
    }
    without_own_image = CHART.replace("name: redis\n      image: docker.io/bitnami/redis", "name: x\n      image: x/y")
    assert build.bitnami_images({"redis": without_own_image}) == {}


def test_a_helm_chart_describes_its_top_image_when_the_names_share_a_word() -> None:
    exporter = (
        "description: DEPRECATED Prometheus exporter for Redis metrics",
        "image:\n  repository: quay.io/oliver006/redis_exporter\n  tag: v1\n",
    )
    unrelated = ("description: Grafana dashboards", "image:\n  repository: nginx\n")
    generic = ("description: A Helm chart for Kubernetes", "image:\n  repository: acme/web\n")
    templated = ("description: Something real here", "image: {{ .Values.x }}: [")
    charts = {"prometheus-redis-exporter": exporter, "grafana": unrelated, "web": generic, "odd": templated}
    assert build.chart_images(charts) == {"oliver006/redis_exporter": "Prometheus exporter for Redis metrics."}


def test_landscape_items_with_a_description_and_a_github_repository_key_their_org_and_repo() -> None:
    assert build.landscape_images(LANDSCAPE) == {
        "grafana/tempo": "Grafana Tempo is a high volume, minimal dependency distributed tracing backend."
    }


def test_the_table_prefers_official_then_bitnami_and_gives_bare_names_to_named_sources_only() -> None:
    table = build.catalogue(
        official={"redis": "Official Redis.", "nginx": "Official build of Nginx."},
        bitnami={"bitnami/redis": "Bitnami Redis.", "bitnami/nginx": "A web server.", "bitnami/argo-cd": "GitOps."},
        charts={"oliver006/redis_exporter": "An exporter."},
        landscape={"grafana/tempo": "Tracing.", "acme/operator": "An operator."},
    )
    assert table["redis"] == "Official Redis."
    assert table["bitnami/redis"] == "Bitnami Redis."
    assert table["nginx"] == "A web server."  # the official line says who built it, not what it is
    assert table["argo-cd"] == "GitOps."
    assert "operator" not in table
    assert "tempo" not in table
    assert table["acme/operator"] == "An operator."


def test_a_retired_official_image_is_described_only_where_no_source_describes_the_name_now() -> None:
    table = build.catalogue(
        official={},
        bitnami={"bitnami/jenkins": "Jenkins is a CI server."},
        charts={},
        landscape={},
        retired={"jenkins": "Jenkins, retired.", "nats-streaming": "NATS Streaming is a streaming system.",
                 "kaazing-gateway": "Official build of Kaazing Gateway."},
    )  # fmt: skip
    assert table["jenkins"] == "Jenkins is a CI server."
    assert table["nats-streaming"] == "NATS Streaming is a streaming system."
    assert "kaazing-gateway" not in table


@pytest.mark.parametrize(
    ("image", "path"),
    [
        ("redis", ("redis",)),
        ("library/redis:7", ("redis",)),
        ("docker.io/library/redis:7-alpine@sha256:abc", ("redis",)),
        ("localhost:5000/team/Postgres:16", ("team", "postgres")),
        ("registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.10.1", ("kube-state-metrics", "kube-state-metrics")),
        ("quay.io/argoproj/argocd@sha256:abc", ("argoproj", "argocd")),
    ],
)
def test_the_path_of_an_image_leaves_off_registry_tag_digest_and_library(image: str, path: tuple[str, ...]) -> None:
    assert catalogue.path_of(image) == path


def test_an_image_matches_its_longest_known_suffix() -> None:
    table = catalogue.images()
    assert catalogue.lookup("docker.io/bitnami/redis:8.2") == table["bitnami/redis"] != table["redis"]
    for image in ("redis", "library/redis:7", "docker.io/library/redis@sha256:abc", "mirror.gcr.io/library/redis:7"):
        assert catalogue.lookup(image) == table["redis"]
    assert (
        catalogue.lookup("registry.k8s.io/kube-state-metrics/kube-state-metrics:v2")
        == (table["kube-state-metrics/kube-state-metrics"])
    )
    assert catalogue.lookup("ghcr.io/grafana/loki:3") == table["grafana/loki"]


@pytest.mark.parametrize(
    "image", ["weaveworksdemos/carts:0.4.8", "shop/frontend", "registry.example.com/team/api:1", ""]
)
def test_an_unknown_image_has_no_description(image: str) -> None:
    assert catalogue.lookup(image) is None


def test_the_shipped_file_is_the_pinned_one_with_its_sources_and_a_few_hundred_entries() -> None:
    raw = resources.files(catalogue).joinpath(catalogue.CATALOGUE_FILE).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == catalogue.CATALOGUE_SHA256
    assert len(raw) < 400_000
    data = json.loads(raw)
    assert {s["name"] for s in data["sources"]} == {
        "docker-library/docs",
        "bitnami/charts",
        "helm/charts",
        "prometheus-community/helm-charts",
        "cncf/landscape",
    }
    assert all(len(s["commit"]) == 40 and s["licence"] and s["entries"] > 0 for s in data["sources"])
    table = catalogue.images()
    assert len(table) >= 500
    assert all(0 < len(line) <= build.MAX_DESCRIPTION_CHARS + 1 for line in table.values())


def test_a_new_catalogue_rebuilds_documents_as_new_code_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "inference"
    shutil.copytree(Path(inference.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    monkeypatch.setattr(inference, "__file__", str(copy / "__init__.py"))
    fingerprint = documents.builder_fingerprint.__wrapped__  # computed once per process otherwise
    before = fingerprint()
    shipped = copy / "catalogue" / catalogue.CATALOGUE_FILE
    shipped.write_text(shipped.read_text(encoding="utf-8").replace("Redis", "Redis!"), encoding="utf-8")
    assert fingerprint() != before
