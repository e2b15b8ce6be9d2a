"""The status of kubevec's own SyncPolicy objects: the only writes the controller makes."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable
from typing import Any

from controller.kube import KubeError, KubeReader
from controller.policy import GROUP, PLURAL, VERSION, SyncPolicy

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SyncStatus:
    """What every SyncPolicy's status reports, taken at one moment."""

    documents: dict[str, int]
    ready: bool
    error: str | None  # the store/embedder error, else the last resync error
    last_flush: float | None
    last_full_resync: float | None


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


async def write_status(*, kube: KubeReader, policies: Iterable[SyncPolicy], sync: SyncStatus) -> None:
    """Merge-patch each policy's status; a failure is logged and the next round tries again."""
    now = time.time()
    for policy in policies:
        try:
            await kube.patch_status(
                group=GROUP, version=VERSION, plural=PLURAL, name=policy.name, status=status_body(policy, sync, now=now)
            )
        except KubeError as exc:
            logger.warning("Failed to write SyncPolicy status name=%s error=%s", policy.name, exc.reason)
