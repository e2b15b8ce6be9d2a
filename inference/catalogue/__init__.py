"""The catalogue of well-known images: an image's repository path -> what the software is, in one line.

``images.json`` is built by :mod:`kubevec.inference.catalogue.build` from pinned public sources (the
official images' descriptions in docker-library/docs, Bitnami's chart descriptions, described projects
of the CNCF landscape; their commits and licences are in the file's ``sources``). Keys are repository
paths without registry, tag or digest: ``redis``, ``bitnami/redis``, ``grafana/loki``.

:func:`lookup` matches an image on its path, longest suffix first, so ``quay.io/bitnami/redis:7``
finds ``bitnami/redis``, ``docker.io/library/redis@sha256:...`` finds ``redis``, and
``registry.k8s.io/kube-state-metrics/kube-state-metrics:v2`` finds ``kube-state-metrics``. A bare
name matches only the last segment whole: ``kbudde/rabbitmq-exporter`` is not RabbitMQ.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Final

#: The shipped file's sha256 (a test pins it: an accidental edit fails, a rebuilt file updates this).
CATALOGUE_SHA256: Final = "6bbcc0c6991e9756f4bb2a0e83611c6b5f89a017aeaa1da332ab73cff1c69aa4"
CATALOGUE_FILE: Final = "images.json"


@functools.cache
def images() -> dict[str, str]:
    """Repository path -> one-line description, as shipped."""
    data = json.loads(resources.files(__name__).joinpath(CATALOGUE_FILE).read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data["images"].items()}


def path_of(image: str) -> tuple[str, ...]:
    """``docker.io/library/redis:7-alpine@sha256:...`` -> ``("redis",)``; ``quay.io/org/app:v1`` ->
    ``("org", "app")``. The registry is the first segment when it has a dot or a port, or is ``localhost``."""
    parts = image.strip().lower().partition("@")[0].split("/")
    parts[-1] = parts[-1].partition(":")[0]
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    if len(parts) > 1 and parts[0] == "library":
        parts = parts[1:]
    return tuple(p for p in parts if p)


def lookup(image: str) -> str | None:
    """What ``image`` is, from the catalogue, matching its path's longest suffix first; None if unknown."""
    table = images()
    parts = path_of(image)
    for start in range(len(parts)):
        if found := table.get("/".join(parts[start:])):
            return found
    return None
