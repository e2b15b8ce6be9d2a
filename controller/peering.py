"""One active replica with kopf peering: kopf pauses its own watchers, this pauses ours.

kopf's rule, applied to the same peering object: a replica pauses while any other live peer has a
higher or equal priority (so give replicas distinct priorities: ``kubevec run`` picks a random one).
kopf keeps its pause state private, so the App reads the peering object itself and runs its resync
and garbage collection only while active.
"""

from __future__ import annotations

import dataclasses
import datetime
import secrets
import socket
from collections.abc import Mapping
from typing import Any, Final

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
        return f"/apis/{PEERING_GROUP}/{PEERING_VERSION}/{PEERING_PLURAL}/{self.name}"


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
