"""Which version of a resource kubevec reads: its group's preferred one if served there, else its own best.

Discovery names one preferred version per API group, but a group's kinds need not share their
versions: prometheus-operator serves Prometheus at ``monitoring.coreos.com/v1`` and
AlertmanagerConfig only at ``v1alpha1``. Reading each group at its preferred version alone (what
kopf's versionless selectors do) never indexes an AlertmanagerConfig. kubectl's rule (client-go's
``ServerPreferredResources``) is kept here, for kubevec's own discovery and for kopf's: a resource is
read at its group's preferred version if it is served there, else at the highest-priority version
that serves it, in Kubernetes' version order.

For a CRD that is always the CRD's own highest-priority served version (the API server makes the
highest of all its CRDs' versions the group's preferred one), so a CRD event alone says which
version its instances are read at (:func:`crd_version`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

_KUBE_LIKE = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STAGES = {None: 0, "beta": 1, "alpha": 2}

T = TypeVar("T")


@functools.cache  # asked on every event of a CRD's kind; a cluster has a few dozen distinct versions
def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key in Kubernetes' order, highest priority first: v2, v1, v2beta1, v1beta2, v1beta1, v1alpha1, then
    versions that are not Kubernetes-like (``v1-preview``) by name."""
    match = _KUBE_LIKE.fullmatch(version)
    if match is None:
        return (len(_STAGES), 0, 0, version)
    major, stage, minor = match.groups()
    return (_STAGES[stage], -int(major), -int(minor or 0), "")


def chosen(candidates: Iterable[tuple[str, T]], *, preferred: str | None) -> tuple[str, T] | None:
    """Of one resource's ``(version, item)`` pairs: the one at the group's ``preferred`` version if any,
    else the one at the highest-priority version (None if there are none)."""
    pairs = list(candidates)
    for version, item in pairs:
        if version == preferred:
            return version, item
    return min(pairs, key=lambda pair: version_priority(pair[0]), default=None)


def crd_version(crd: Mapping[str, Any]) -> str | None:
    """The version a CRD's instances are read at: its highest-priority served version."""
    spec = crd.get("spec") or {}
    served = [str(v.get("name")) for v in spec.get("versions") or [] if isinstance(v, Mapping) and v.get("served")]
    return min(served, key=version_priority, default=None)
