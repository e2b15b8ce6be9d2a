"""Instance documents: one per live object, with the metadata agents filter on.

Built only from ``metadata`` (name, namespace, labels, owner, selected annotations, uid, creation
time) and ``spec``-like content, after redaction: per kind, the facts agents ask for (containers'
resources, probes and placement, NetworkPolicy rules, Role rules, binding subjects, quota limits,
autoscaler targets; a custom resource's spec leaves by path), never a container's ``env`` values
nor its arguments (its program and flag names only). ``resourceVersion``, ``generation`` and timestamps other than creation are
never read, and ``status`` only for the health summary (``inference/health.py``) and a quota's usage,
both in the metadata, as are the latest Warning Event (``inference/warnings.py``), the references
to other objects (``inference/references.py``) and the facts for listing (:func:`facts_of`). So
churn does not change the text, and changes the metadata (hence the content hash) only when what
it shows changes; a label or image change does.

One module per family of kinds, each with its own summariser table: :mod:`.workloads` (whatever
runs containers), :mod:`.networking` (Services, Ingresses, routes, NetworkPolicies), :mod:`.rbac`
(Roles and bindings), :mod:`.config` (quotas, limits, budgets, autoscalers, claims, Secret and
ConfigMap keys) and :mod:`.generic` (every other kind: the spec's leaves by path); :mod:`.document`
builds the document around them and :mod:`.summary` holds what they share. A new kind family is a
module with its ``SUMMARISERS`` and one line in :mod:`.document`.
"""

from __future__ import annotations

from kubevec.inference.instances.document import (
    DESCRIPTIVE_ANNOTATION,
    InstanceDoc,
    build_instance,
    facts_of,
)
from kubevec.inference.instances.generic import MAX_FIELD_CHARS, MAX_SPEC_DEPTH, MAX_WALK
from kubevec.inference.instances.summary import (
    MAX_LIST_ITEMS,
    MAX_SPEC_FIELDS,
    MAX_TEXT_LABELS,
    MAX_VALUE_CHARS,
    InstancePolicy,
)
from kubevec.inference.instances.workloads import workload_metadata

__all__ = [
    "DESCRIPTIVE_ANNOTATION",
    "MAX_FIELD_CHARS",
    "MAX_LIST_ITEMS",
    "MAX_SPEC_DEPTH",
    "MAX_SPEC_FIELDS",
    "MAX_TEXT_LABELS",
    "MAX_VALUE_CHARS",
    "MAX_WALK",
    "InstanceDoc",
    "InstancePolicy",
    "build_instance",
    "facts_of",
    "workload_metadata",
]
