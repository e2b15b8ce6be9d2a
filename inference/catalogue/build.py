"""Builds ``images.json``, the catalogue of well-known images, from pinned public sources.

Not run by kubevec: run by hand to refresh the shipped file, from local clones of the sources::

    python -m kubevec.inference.catalogue.build \\
        --docker-docs <docker-library/docs> --bitnami <bitnami/charts> --helm-stable <helm/charts> \\
        --prometheus-charts <prometheus-community/helm-charts> --landscape <cncf/landscape> \\
        > inference/catalogue/images.json

(each a git directory or a work tree; the file is read at its ``HEAD``, whose commit the output records).
Then set ``CATALOGUE_SHA256`` in ``kubevec/inference/catalogue/__init__.py`` to the new file's sha256.

What each source gives, keyed by the image's repository path (registry, tag and digest left off):

- docker-library/docs (MIT): every official image's ``README-short.txt``, keyed ``redis``, and those of
  images since retired from the library (``nats-streaming``, ``celery``, ``java``): old manifests still
  run them; each as its last version before it was marked deprecated (none when every one was);
- bitnami/charts (Apache-2.0): each chart's ``description`` for the image named like the chart in its
  ``annotations.images``, keyed ``bitnami/redis``, and the bare name when no official image has it;
- prometheus-community/helm-charts and helm/charts' archived ``stable/`` (Apache-2.0): each chart's
  ``description`` for its values' top-level ``image.repository`` when the image is named like the
  chart, keyed by that path (``oliver006/redis_exporter``); the newer repository wins a clash;
- cncf/landscape (Apache-2.0): the items with a ``description`` and a GitHub ``repo_url``, keyed
  ``<org>/<repo>`` (the path ``ghcr.io``, ``quay.io`` and Docker Hub images of the project take).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import yaml

from kubevec.inference.catalogue import path_of

#: A description longer than this is cut at its first sentence, then at a word.
MAX_DESCRIPTION_CHARS: Final = 160
_MARKS: Final = re.compile(r"\((?:R|TM)\)|[®™]")
_DEPRECATED: Final = re.compile(r"^DEPRECATED[-!;.: ]*", re.IGNORECASE)
#: An official image's line that says who built it, not what it is ("Official build of Nginx.").
_SAYS_NOTHING: Final = re.compile(r"\bofficial (docker )?(build|image)", re.IGNORECASE)
_HELM_CHART: Final = re.compile(r"^[-!:;. ]*(an? )?(helm )?chart (for|to (install|deploy)) ", re.IGNORECASE)
_MIN_CHART_DESCRIPTION: Final = 12
_GITHUB_REPO: Final = re.compile(r"^https?://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True, kw_only=True)
class Source:
    name: str
    url: str
    licence: str


DOCKER_DOCS: Final = Source(
    name="docker-library/docs",
    url="https://github.com/docker-library/docs",
    licence="MIT (Copyright (c) 2014 Docker, Inc.; the repository's LICENSE)",
)
BITNAMI: Final = Source(
    name="bitnami/charts",
    url="https://github.com/bitnami/charts",
    licence="Apache-2.0 (the repository's LICENSE.md)",
)
HELM_STABLE: Final = Source(
    name="helm/charts",
    url="https://github.com/helm/charts",
    licence="Apache-2.0 (the repository's LICENSE; archived 2020, its stable/ charts)",
)
PROMETHEUS_CHARTS: Final = Source(
    name="prometheus-community/helm-charts",
    url="https://github.com/prometheus-community/helm-charts",
    licence="Apache-2.0 (the repository's LICENSE)",
)
LANDSCAPE: Final = Source(
    name="cncf/landscape",
    url="https://github.com/cncf/landscape",
    licence="Apache-2.0 (the repository's LICENSE)",
)


def one_line(text: str) -> str:
    """A description as one plain sentence: marks and a DEPRECATED prefix dropped, long ones cut."""
    flat = _DEPRECATED.sub("", _MARKS.sub("", " ".join(text.split()))).strip()
    if not flat:
        return ""
    if len(flat) > MAX_DESCRIPTION_CHARS:
        sentence = flat.split(". ", 1)[0]
        flat = (
            sentence
            if len(sentence) <= MAX_DESCRIPTION_CHARS
            else flat[: MAX_DESCRIPTION_CHARS - 3].rsplit(" ", 1)[0] + "..."
        )
    return flat if flat[-1] in ".!?" else flat + "."  # a sentence each: a workload's lines join with a space


def official_images(readmes: Mapping[str, str]) -> dict[str, str]:
    """docker-library/docs: ``{folder: README-short.txt}`` -> ``{image: description}``."""
    return {name.lower(): line for name, text in sorted(readmes.items()) if (line := one_line(text))}


def bitnami_images(charts: Mapping[str, str]) -> dict[str, str]:
    """bitnami/charts: ``{chart: Chart.yaml text}`` -> ``{bitnami/<image>: description}``, for the image
    named like its chart (the chart's other images are sidecars: shells, exporters, kubectl)."""
    out = {}
    for chart, text in sorted(charts.items()):
        meta = yaml.safe_load(text)
        if not isinstance(meta, Mapping) or not (line := one_line(str(meta.get("description") or ""))):
            continue
        names = {_image_name(entry) for entry in _chart_images(meta)}
        if chart in names:
            out[f"bitnami/{chart}"] = line
    return out


def chart_images(charts: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """Helm charts: ``{chart: (Chart.yaml text, values.yaml text)}`` -> ``{image path: description}`` for
    the chart's own image, its values' top-level ``image``, when that image's name shares a word with the
    chart's (``prometheus-redis-exporter`` runs ``oliver006/redis_exporter``; a ``grafana`` chart whose
    top image is ``nginx`` says nothing about nginx). "A Helm chart for Kubernetes" describes nothing."""
    out: dict[str, str] = {}
    for chart, (chart_yaml, values_yaml) in sorted(charts.items()):
        try:
            meta, values = yaml.safe_load(chart_yaml), yaml.safe_load(values_yaml)
        except yaml.YAMLError:
            continue  # a template-only values file; the chart is skipped, not the build
        if not isinstance(meta, Mapping) or not isinstance(values, Mapping):
            continue
        line = one_line(_HELM_CHART.sub("", _DEPRECATED.sub("", str(meta.get("description") or "").strip())))
        image = values.get("image")
        repository = image.get("repository") if isinstance(image, Mapping) else None
        if not isinstance(repository, str) or len(line) < _MIN_CHART_DESCRIPTION or line.lower() == "kubernetes":
            continue
        path = "/".join(path_of(repository))
        if path and _words(path.rpartition("/")[2]) & _words(chart):
            out.setdefault(path, line[:1].upper() + line[1:])
    return out


def landscape_images(landscape: str) -> dict[str, str]:
    """cncf/landscape's ``landscape.yml`` -> ``{<org>/<repo>: description}`` for described GitHub projects."""
    out: dict[str, str] = {}
    for item in _landscape_items(yaml.safe_load(landscape)):
        match = _GITHUB_REPO.match(str(item.get("repo_url") or ""))
        if match and (line := one_line(str(item.get("description") or ""))):
            out.setdefault(f"{match[1]}/{match[2]}".lower(), line)
    return dict(sorted(out.items()))


def catalogue(
    *,
    official: Mapping[str, str],
    bitnami: Mapping[str, str],
    charts: Mapping[str, str],
    landscape: Mapping[str, str],
    retired: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """One table: official images by name, Bitnami's by ``bitnami/<name>`` and by the bare name no official
    image has, chart images and landscape projects by their path (never a bare name: ``server`` or
    ``operator`` says nothing). Where two sources key the same path, the first in that order wins. Retired
    official images come last, where no source describes the name now, and only when their line says what
    the software is ("Official build of Kaazing Gateway." does not)."""
    table = {**landscape, **charts, **bitnami}
    for key, line in bitnami.items():
        table.setdefault(key.removeprefix("bitnami/"), line)
    table.update((name, line) for name, line in official.items() if not (_SAYS_NOTHING.search(line) and name in table))
    for name, line in (retired or {}).items():
        if not _SAYS_NOTHING.search(line):
            table.setdefault(name, line)
    return dict(sorted(table.items()))


def _chart_images(meta: Mapping[str, Any]) -> list[Any]:
    annotations = meta.get("annotations")
    listed = annotations.get("images") if isinstance(annotations, Mapping) else None
    images = yaml.safe_load(listed) if isinstance(listed, str) else None
    return images if isinstance(images, list) else []


def _words(name: str) -> set[str]:
    return set(re.split(r"[-_.]", name)) - {"", "k8s", "docker", "prometheus", "helm", "chart", "amd64"}


def _image_name(entry: Any) -> str:
    image = str(entry.get("image") or "") if isinstance(entry, Mapping) else ""
    return image.partition("@")[0].rpartition("/")[2].partition(":")[0].lower()


def _landscape_items(doc: Any) -> Iterator[Mapping[str, Any]]:
    for category in (doc or {}).get("landscape") or []:
        for subcategory in (category or {}).get("subcategories") or []:
            for entry in (subcategory or {}).get("items") or []:
                item = (entry.get("item") or entry) if isinstance(entry, Mapping) else None  # `- item:` then its keys
                if isinstance(item, Mapping):
                    yield item


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True).stdout


def _git_dir(path: str) -> str:
    inner = subprocess.run(["git", "-C", path, "rev-parse", "--git-dir"], check=True, capture_output=True, text=True)
    found = inner.stdout.strip()
    return found if found.startswith("/") else f"{path}/{found}"


def _charts(repo: str, *, under: str) -> dict[str, tuple[str, str]]:
    """``{chart: (Chart.yaml, values.yaml)}`` of every chart folder under ``under`` at HEAD."""
    charts = _files(repo, under=under, named="Chart.yaml")
    values = _files(repo, under=under, named="values.yaml")
    return {name: (text, values[name]) for name, text in charts.items() if name in values}


def _retired(repo: str, *, named: str, present: Iterable[str]) -> dict[str, str]:
    """``{folder: text}`` of every top-level ``<folder>/<named>`` since removed (before ``HEAD``; ``present``:
    the folders that have one there), as its last version not marked deprecated: the description its
    maintainers wrote while it was kept."""
    present = set(present)
    removed = _git(repo, "log", "--diff-filter=D", "--format=", "--name-only", "HEAD", "--", f"*/{named}").split()
    out = {}
    for path in sorted(set(removed)):
        folder = path.partition("/")[0]
        if path != f"{folder}/{named}" or folder in present:
            continue
        for commit in _git(repo, "log", "--diff-filter=AM", "--format=%H", "HEAD", "--", path).split():
            text = _git(repo, "show", f"{commit}:{path}").strip()
            if text and not _DEPRECATED.match(text):
                out[folder] = text
                break
    return out


def _files(repo: str, *, under: str, named: str) -> dict[str, str]:
    """``{folder: text}`` of every ``<under>/<folder>/<named>`` at HEAD."""
    listed = _git(repo, "ls-tree", "-r", "--name-only", "HEAD", *([under] if under else []))
    out = {}
    for path in listed.splitlines():
        parts = path.split("/")
        if parts[-1] == named and len(parts) == (3 if under else 2):
            out[parts[-2]] = _git(repo, "show", f"HEAD:{path}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the image catalogue from pinned public sources.")
    parser.add_argument("--docker-docs", required=True, help="a clone of docker-library/docs")
    parser.add_argument("--bitnami", required=True, help="a clone of bitnami/charts")
    parser.add_argument("--helm-stable", required=True, help="a clone of helm/charts")
    parser.add_argument("--prometheus-charts", required=True, help="a clone of prometheus-community/helm-charts")
    parser.add_argument("--landscape", required=True, help="a clone of cncf/landscape")
    args = parser.parse_args(argv)
    repos = {
        DOCKER_DOCS: _git_dir(args.docker_docs),
        BITNAMI: _git_dir(args.bitnami),
        PROMETHEUS_CHARTS: _git_dir(args.prometheus_charts),
        HELM_STABLE: _git_dir(args.helm_stable),
        LANDSCAPE: _git_dir(args.landscape),
    }
    readmes = _files(repos[DOCKER_DOCS], under="", named="README-short.txt")
    official = official_images(readmes)
    retired = official_images(_retired(repos[DOCKER_DOCS], named="README-short.txt", present=readmes))
    bitnami = bitnami_images(_files(repos[BITNAMI], under="bitnami", named="Chart.yaml"))
    prometheus = chart_images(_charts(repos[PROMETHEUS_CHARTS], under="charts"))
    stable = chart_images(_charts(repos[HELM_STABLE], under="stable"))
    landscape = landscape_images(_git(repos[LANDSCAPE], "show", "HEAD:landscape.yml"))
    counts = {
        DOCKER_DOCS: len(official) + len(retired),
        BITNAMI: len(bitnami),
        PROMETHEUS_CHARTS: len(prometheus),
        HELM_STABLE: len(stable),
        LANDSCAPE: len(landscape),
    }
    sources = [
        {
            "name": source.name,
            "url": source.url,
            "commit": _git(repo, "rev-parse", "HEAD").strip(),
            "date": _git(repo, "log", "-1", "--format=%cs", "HEAD").strip(),
            "licence": source.licence,
            "entries": counts[source],
        }
        for source, repo in repos.items()
    ]
    table = catalogue(
        official=official, bitnami=bitnami, charts={**stable, **prometheus}, landscape=landscape, retired=retired
    )
    json.dump({"sources": sources, "images": table}, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
