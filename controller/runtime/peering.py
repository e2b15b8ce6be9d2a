"""One active replica with kopf peering: kopf pauses its own watchers, this pauses ours.

kopf's rule, applied to the same peering object: a replica pauses while any other live peer has a
higher or equal priority (so give replicas distinct priorities: ``kubevec run`` picks a random one).
kopf keeps its pause state private, so the App reads the peering object itself and runs its resync
and garbage collection only while active.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from kubevec.controller.kube.client import ClusterReader
from kubevec.controller.kube.resources import api_path
from kubevec.core.errors import KubeError

logger = logging.getLogger(__name__)

PEERING_GROUP: Final = "kopf.dev"
PEERING_VERSION: Final = "v1"
PEERING_PLURAL: Final = "clusterkopfpeerings"


@dataclasses.dataclass(frozen=True, kw_only=True)
class PeeringIdentity:
    name: str
    identity: str
    priority: int
    lifetime: int

    @classmethod
    def create(cls, *, name: str, priority: int | None, lifetime: int) -> PeeringIdentity:
        identity = f"kubevec-{socket.gethostname()}-{secrets.token_hex(4)}"
        return cls(
            name=name,
            identity=identity,
            priority=priority if priority is not None else secrets.randbelow(2**30) + 1,
            lifetime=lifetime,
        )

    @property
    def path(self) -> str:
        return api_path(group=PEERING_GROUP, version=PEERING_VERSION, plural=PEERING_PLURAL, name=self.name)


def is_active(*, me: PeeringIdentity, status: Mapping[str, Any] | None, now: datetime.datetime | None = None) -> bool:
    """True unless another live peer has a higher or equal priority (kopf's own rule)."""
    now = now or datetime.datetime.now(datetime.UTC)
    for peer_id, info in (status or {}).items():
        if peer_id == me.identity or not isinstance(info, Mapping):
            continue
        try:
            lastseen = datetime.datetime.fromisoformat(str(info["lastseen"]))
            lifetime = datetime.timedelta(seconds=int(info.get("lifetime", 60)))
            priority = int(info.get("priority", 0))
        except (KeyError, ValueError, TypeError):
            continue
        if lastseen.tzinfo is None:
            lastseen = lastseen.replace(tzinfo=datetime.UTC)
        if lastseen + lifetime > now and priority >= me.priority:
            return False
    return True


async def follow(*, kube: ClusterReader, me: PeeringIdentity, on_change: Callable[[bool], None]) -> None:
    """Track whether this replica is the active peer; ``on_change(active)`` on every change.

    A replica may lead only once its own keep-alive is in the peering object and a settling period
    has passed: replicas started together must see each other before either writes.
    """
    interval = max(1.0, me.lifetime / 4)
    settle = min(5.0, me.lifetime / 2)
    seen_self_at: float | None = None
    active = False
    while True:
        try:
            body = await kube.get(me.path)
            status = (body or {}).get("status") or {}
            if me.identity in status and seen_self_at is None:
                seen_self_at = time.monotonic()
            settled = seen_self_at is not None and time.monotonic() - seen_self_at >= settle
            now_active = settled and is_active(me=me, status=status)
        except KubeError as exc:
            logger.warning("Failed to read the peering object name=%s error=%s", me.name, exc.reason)
            now_active = active
        if now_active != active:
            logger.info("Became the %s replica peering=%s", "active" if now_active else "standby", me.name)
            active = now_active
            on_change(active)
        await asyncio.sleep(interval)
