"""Instance-shaped records for the stores benchmark: what the controller writes, without a cluster.

A store's cost depends on the shape of what it holds, not only on the vectors: Chroma, LanceDB,
Weaviate and Redis index each payload value, so ids, payloads and texts are shaped like instance
documents (ids from ``InstanceId``, the indexed fields, texts of a few hundred bytes) and the kinds
are spread as in a real cluster (Pods and ReplicaSets are most of it). Each record is a pure
function of its number, built batch by batch, so a 100,000-record load never holds the whole data
set in memory (the client's RSS is then the store's, not the bench's) and a reader in another
process asks the same questions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Final, NamedTuple

import numpy as np

from kubevec.backends import Record
from kubevec.backends.filters import And, Eq, Filter, In, matches
from kubevec.core.types import MetadataValue
from kubevec.inference.identity import InstanceId

DIM: Final = 384
SEED: Final = 1


class Kind(NamedTuple):
    group: str
    version: str
    kind: str
    plural: str
    #: Records of this kind per 100.
    share: int


KINDS: Final = (
    Kind("", "v1", "Pod", "pods", 38),
    Kind("apps", "v1", "ReplicaSet", "replicasets", 22),
    Kind("apps", "v1", "Deployment", "deployments", 8),
    Kind("", "v1", "Service", "services", 7),
    Kind("", "v1", "ConfigMap", "configmaps", 6),
    Kind("", "v1", "Secret", "secrets", 5),
    Kind("", "v1", "ServiceAccount", "serviceaccounts", 4),
    Kind("apps", "v1", "StatefulSet", "statefulsets", 2),
    Kind("batch", "v1", "Job", "jobs", 2),
    Kind("cert-manager.io", "v1", "Certificate", "certificates", 2),
    Kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", 2),
    Kind("apps", "v1", "DaemonSet", "daemonsets", 1),
    Kind("networking.k8s.io", "v1", "Ingress", "ingresses", 1),
)
_BY_SHARE: Final = tuple(kind for kind in KINDS for _ in range(kind.share))
_KIND_BY_NAME: Final = {kind.kind: kind for kind in KINDS}
NAMESPACES: Final = tuple(f"team-{i}" for i in range(40))
#: Clusters by share of 10: several controllers writing one store.
CLUSTERS: Final = ("prod-eu",) * 5 + ("prod-us",) * 3 + ("staging",) * 2
HEALTH: Final = ("healthy",) * 8 + ("progressing", "degraded")
TIERS: Final = ("web", "api", "worker", "cache", "db")

#: The filters agents send (one kind in one namespace; a family of kinds; one cluster of several),
#: and none at all.
FILTERS: Final[Mapping[str, Filter | None]] = {
    "kind + namespace": And((Eq("kind", "Deployment"), Eq("namespace", "team-3"))),
    "kind in 3": In("kind", ("Deployment", "StatefulSet", "DaemonSet")),
    "cluster": Eq("cluster", "staging"),
    "none": None,
}


def _spread(number: int) -> int:
    """A fixed scramble of the record's number, so kind, namespace and cluster do not move in step."""
    return (number * 2654435761 + 12345) % 2**32


def payload(number: int) -> dict[str, MetadataValue]:
    """The indexed fields of record ``number`` (what filters read), cheap enough to count matches with."""
    h = _spread(number)
    kind = _BY_SHARE[h % 100]
    namespace = NAMESPACES[(h // 100) % len(NAMESPACES)]
    cluster = CLUSTERS[(h // 4000) % len(CLUSTERS)]
    app = f"{TIERS[number % len(TIERS)]}-{number % 997}"
    name = f"{app}-{number:06d}"
    group = kind.group or "core"
    return {
        "cluster": cluster,
        "kind": kind.kind,
        "group": group,
        "version": kind.version,
        "api_version": f"{kind.group}/{kind.version}" if kind.group else kind.version,
        "resource": f"{kind.plural}.{kind.group}" if kind.group else kind.plural,
        "namespace": namespace,
        "name": name,
        "uid": f"{h:08x}-{number:04x}-4000-8000-{number:012x}",
        "labels": [f"app={app}", f"tier={TIERS[number % len(TIERS)]}", "app.kubernetes.io/part-of=shop"],
        "health": HEALTH[(h // 40000) % len(HEALTH)],
    }


def record(number: int, vector: list[float]) -> Record:
    """Record ``number``: an instance id, the indexed payload plus bookkeeping, a document-like text."""
    meta = payload(number)
    kind, namespace, name = str(meta["kind"]), str(meta["namespace"]), str(meta["name"])
    app = name.rsplit("-", 1)[0]
    if kind in ("Pod", "ReplicaSet"):
        meta["owner"] = f"{'ReplicaSet' if kind == 'Pod' else 'Deployment'}/{app}"
    meta["refs"] = [f"ServiceAccount/{namespace}/{app}", f"ConfigMap/{namespace}/{app}-config"]
    text = (
        f"{kind} {namespace}/{name} in cluster {meta['cluster']}, part of shop ({app}). "
        f"Labels: app={app}, tier={app.split('-')[0]}, app.kubernetes.io/part-of=shop. "
        f"Health: {meta['health']}. Runs container {app} from registry.example.com/{namespace}/{app}:1.{number % 40}.3, "
        f"requests cpu 100m memory 128Mi, limits memory 256Mi; listens on 8080 (http) and 9090 (metrics). "
        f"Environment: LOG_LEVEL, DATABASE_URL, CACHE_HOST. Uses ServiceAccount {app} and ConfigMap {app}-config."
    )
    text_hash = hashlib.sha256(text.encode()).hexdigest()
    meta |= {
        "content_hash": hashlib.sha256(f"{text_hash}{number}".encode()).hexdigest(),
        "text_hash": text_hash,
        "schema_version": 7,
        "built_from": f"{meta['uid']}@{number + 1000}",
        "created_at": f"2026-0{1 + number % 9}-1{number % 10}T08:00:00Z",
    }
    ident = InstanceId(
        cluster=str(meta["cluster"]),
        namespace=namespace,
        group=_KIND_BY_NAME[kind].group,
        version=str(meta["version"]),
        kind=kind,
        name=name,
    )
    return Record(id=ident.id, vector=vector, text=text, metadata=meta)


def batches(size: int, *, batch: int) -> Iterator[list[Record]]:
    """Records ``0..size-1`` in batches, each batch's unit vectors drawn from its own seed."""
    for start in range(0, size, batch):
        count = min(batch, size - start)
        vectors = np.random.default_rng([SEED, start]).normal(size=(count, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        yield [record(start + i, vectors[i].tolist()) for i in range(count)]


def queries(count: int) -> np.ndarray:
    """``count`` unit query vectors, the same in every process."""
    vectors = np.random.default_rng([SEED, -1 % 2**32]).normal(size=(count, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def match_counts(size: int) -> dict[str, int]:
    """How many of the first ``size`` records each filter matches (what a full top-10 needs at least)."""
    counts = dict.fromkeys(FILTERS, 0)
    for number in range(size):
        meta = payload(number)
        for label, query_filter in FILTERS.items():
            counts[label] += query_filter is None or matches(query_filter, text="", metadata=meta)
    return counts
