"""What a troubled object's own words blame: the quota that refused its Pods, the claim or Secret it waits for.

Kubernetes says the cause of much trouble by name, in the messages of its conditions and Warning Events:
``pods "web-5d8f" is forbidden: exceeded quota: default``, ``failed quota: team-quota: must specify
limits.cpu``, ``persistentvolumeclaim "data" not found``. The object named there is where the trouble
comes from, so a question about trouble ("why are some pods never created", "what limits the ReplicaSets")
wants it beside the troubled ones, though its own status may look fine (a quota is not "failing"). Read by
:mod:`kubevec.query.readers.search`; the messages are the ones the documents already carry (redacted).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from kubevec.core import fields
from kubevec.query.trouble import health_of

#: ``exceeded quota: NAME`` / ``failed quota: NAME:`` (the quota admission plugin's words).
_QUOTA: Final = re.compile(r"\b(?:exceeded|failed) quota: ([a-z0-9][a-z0-9.-]*[a-z0-9])\b")
#: ``KIND "NAME" not found`` for the namespaced kinds a Pod waits for (the kubelet's and the API server's words).
_NOT_FOUND: Final = re.compile(
    r"\b(persistentvolumeclaim|secret|configmap|serviceaccount)s? \"([a-z0-9][a-z0-9.-]*[a-z0-9])\" not found\b"
)
_KINDS: Final = {
    "persistentvolumeclaim": "PersistentVolumeClaim",
    "secret": "Secret",
    "configmap": "ConfigMap",
    "serviceaccount": "ServiceAccount",
}
#: Blamed objects read per question, at most.
MAX_BLAMED: Final = 32


def blamed_by(metadata: Mapping[str, Any]) -> frozenset[str]:
    """The keys (``Kind/namespace/name``) a troubled object's messages name as the cause; none when it is fine."""
    namespace = fields.NAMESPACE.of(metadata)
    if not namespace or health_of(metadata) != "degraded":
        return frozenset()
    found: set[str] = set()
    for message in (fields.HEALTH_MESSAGE.of(metadata), fields.WARNING_MESSAGE.of(metadata)):
        text = (message or "").lower()
        found.update(f"ResourceQuota/{namespace}/{name}" for name in _QUOTA.findall(text))
        found.update(f"{_KINDS[kind]}/{namespace}/{name}" for kind, name in _NOT_FOUND.findall(text))
    return frozenset(found)


def blamed(candidates: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """What the troubled ``candidates`` blame, at most :data:`MAX_BLAMED` keys (in order)."""
    keys = sorted({key for metadata in candidates for key in blamed_by(metadata)})
    return frozenset(keys[:MAX_BLAMED])
