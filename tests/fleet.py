"""Two clusters running different versions of one operator: the CRDs a fleet test and bench share.

``operator_crds(cluster="east")`` and ``operator_crds(cluster="west")`` give the same ``count`` types:
the first half differ in schema (west's operator added a field, so the texts differ), the second
half are the same schema that west also serves at ``v2`` (same text, other versions).
"""

from __future__ import annotations

from typing import Any

from kubevec.backends import VectorStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.engine import SyncEngine
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.documents import CAPABILITIES, INSTANCES, Document
from kubevec.inference.providers.embedders.base import Embedder

GROUP = "fleet.example.com"
NAMES = {CAPABILITIES: CAPABILITIES, INSTANCES: INSTANCES}


def operator_crd(index: int, *, cluster: str, extra: bool = False) -> dict[str, Any]:
    newer = cluster == "west"
    properties: dict[str, Any] = {
        "size": {"type": "integer", "description": f"How many replicas of widget {index} to run"},
        "storageClass": {"type": "string", "description": "Where widget data is kept"},
    }
    differs = index < 10
    if (newer and differs) or extra:
        properties["tuning"] = {"type": "string", "description": "Performance profile added by the newer operator"}
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "description": f"Widget{index} runs a managed widget service number {index} with backups.",
            "properties": {"spec": {"type": "object", "properties": properties}},
        }
    }
    versions = [{"name": "v1", "served": True, "storage": not (newer and not differs), "schema": schema}]
    if newer and not differs:
        versions.append({"name": "v2", "served": True, "storage": True, "schema": schema})
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widget{index}s.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": f"Widget{index}", "plural": f"widget{index}s", "singular": f"widget{index}"},
            "versions": versions,
        },
    }


def operator_crds(*, cluster: str, count: int = 20) -> dict[str, Document]:
    documents = [describe_crd(operator_crd(i, cluster=cluster), cluster=cluster).to_document() for i in range(count)]
    return {d.id: d for d in documents}


async def fleet_engine(
    *, store: VectorStore, embedder: Embedder, cluster: str, metrics: Metrics | None = None
) -> SyncEngine:
    engine = SyncEngine(
        store=store, embedder=embedder, metrics=metrics or Metrics(), collection_names=NAMES, cluster=cluster
    )
    await engine.prepare()
    return engine


async def resync(engine: SyncEngine, capabilities: dict[str, Document]) -> None:
    """What a resync of a cluster with exactly these types does (no instances), flushed."""
    snapshot = await engine.snapshot()
    await engine.reconcile(
        snapshot=snapshot, desired={CAPABILITIES: capabilities, INSTANCES: {}}, keep=lambda collection, id: False
    )
    assert await engine.flush()
