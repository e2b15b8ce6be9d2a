"""The controller's status: on its own SyncPolicy objects (the only writes it makes to the cluster), and
as one record per cluster in the store's ``status`` collection, so ``kubevec status`` can show it
where the cluster cannot be reached."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Iterable
from typing import Any

from kubevec.backends import Record, VectorStore
from kubevec.controller.kube.client import ClusterReader
from kubevec.controller.sync.policy import GROUP, PLURAL, VERSION, SyncPolicy
from kubevec.core.errors import BackendError, KubeError

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SyncStatus:
    """What every SyncPolicy's status reports, taken at one moment."""

    documents: dict[str, int]
    ready: bool
    error: str | None  # the store/embedder error, else the last resync error
    last_flush: float | None
    last_full_resync: float | None
    #: Objects skipped as malformed or past a bound, ``identity (reason)``, newest last.
    skipped: tuple[str, ...] = ()
    #: The builder fingerprint whose gate last judged this cluster's change records (``""``: none yet).
    history_judged_by: str = ""


def _timestamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _condition(kind: str, value: bool, reason: str, now: str, message: str = "") -> dict[str, str]:
    status = "True" if value else "False"
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}


def status_body(policy: SyncPolicy, sync: SyncStatus, *, now: float) -> dict[str, Any]:
    stamp = _timestamp(now)
    degraded = sync.error is not None
    return {
        "observedGeneration": policy.generation,
        "documents": dict(sync.documents),
        "lastSyncTime": _timestamp(sync.last_flush or now),
        "lastFullResyncTime": _timestamp(sync.last_full_resync) if sync.last_full_resync else None,
        "lastError": sync.error,
        "conditions": [
            _condition("Ready", sync.ready and not degraded, "Synced" if sync.ready else "Syncing", stamp),
            _condition("Degraded", degraded, "SyncFailing" if degraded else "Healthy", stamp, sync.error or ""),
        ],
    }


async def write_status(*, kube: ClusterReader, policies: Iterable[SyncPolicy], sync: SyncStatus) -> None:
    """Merge-patch each policy's status; a failure is logged and the next round tries again."""
    now = time.time()
    for policy in policies:
        try:
            await kube.patch_status(
                group=GROUP, version=VERSION, plural=PLURAL, name=policy.name, status=status_body(policy, sync, now=now)
            )
        except KubeError as exc:
            logger.warning("Failed to write SyncPolicy status name=%s error=%s", policy.name, exc.reason)


#: The store collection (before the prefix) holding one status record per cluster; outside the
#: document contract and never searched, so a 1-d vector and no embedder.
STATUS_COLLECTION = "status"
STATUS_EMBEDDER = "kubevec-status"


#: Skipped objects named in the status record (the count covers all).
MAX_SKIPPED_SHOWN = 20


def status_record_id(cluster: str) -> str:
    return f"status/{cluster}"


def status_record(sync: SyncStatus, *, cluster: str, version: str, now: float) -> Record:
    metadata: dict[str, str | int | float | bool | list[str]] = {
        "cluster": cluster,
        "ready": sync.ready,
        "degraded": sync.error is not None,
        "last_error": sync.error or "",
        "last_sync_time": _timestamp(sync.last_flush or now),
        "last_full_resync_time": _timestamp(sync.last_full_resync) if sync.last_full_resync else "",
        "reported_at": _timestamp(now),
        "version": version,
        **{f"documents_{collection}": count for collection, count in sync.documents.items()},
        "skipped": len(sync.skipped),
        "history_judged_by": sync.history_judged_by,
    }
    if sync.skipped:
        metadata["skipped_objects"] = list(sync.skipped[-MAX_SKIPPED_SHOWN:])
    metadata["content_hash"] = hashlib.sha256(json.dumps(metadata, sort_keys=True).encode()).hexdigest()
    return Record(
        id=status_record_id(cluster), vector=[1.0], text=f"kubevec status of cluster {cluster}", metadata=metadata
    )


async def write_store_status(*, store: VectorStore, collection: str, record: Record) -> None:
    """Upsert the status record; a failure is logged (the store's own errors already degrade the sync)."""
    try:
        await store.ensure_collection(collection, dimension=1, embedder=STATUS_EMBEDDER)
        await store.upsert(collection, [record])
    except BackendError as exc:
        logger.warning("Failed to write the status record collection=%s error=%s", collection, exc)
