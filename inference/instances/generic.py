"""Any other kind (custom resources above all): the spec's leaves by path, shallow first, bounded.

No kind-specific knowledge: what a custom resource means is in its field names and values, so they
are written as paths (``issuerRef: ClusterIssuer/letsencrypt``, ``selector: app=web``) within a
fixed number of fields and values, whatever the spec's size.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kubevec.inference.instances.summary import (
    MAX_LIST_ITEMS,
    MAX_SPEC_FIELDS,
    MAX_VALUE_CHARS,
    InstancePolicy,
    short,
)
from kubevec.inference.redaction import REDACTED, Redacted

#: Top-level fields that are not what a spec-less kind (StorageClass, PriorityClass) configures: the
#: head, the status, and a ConfigMap's or Secret's values (never read here; the gate dropped them too).
_NOT_SPEC: Final = frozenset({"apiVersion", "kind", "metadata", "status", "data", "stringData", "binaryData"})
#: Maps rendered as ``key=value`` pairs rather than one field per key.
_PAIR_MAPS = re.compile(r"(labels|selector|matchLabels|annotations|nodeSelector)$", re.IGNORECASE)


def spec_summary(source: Redacted, _: InstancePolicy) -> list[str]:
    """Any other kind (custom resources, schemaless or not): the spec's leaves by path, shallow first;
    for a kind with no spec, its top-level fields (``provisioner: pd.csi.storage.gke.io``, ``parameters.type``).

    ``endpoints.port: web, reloader-web`` for a list of maps, ``selector: app=web`` for a label map,
    ``issuerRef: ClusterIssuer/letsencrypt`` for a reference; at most :data:`MAX_SPEC_FIELDS` paths of
    :data:`MAX_LIST_ITEMS` values, so a huge spec costs a bounded line (the redaction already ran)."""
    spec = source.obj.get("spec")
    if not isinstance(spec, Mapping):  # a kind whose fields are at the top (StorageClass, PriorityClass)
        spec = {k: v for k, v in source.obj.items() if k not in _NOT_SPEC}
    if not spec:
        return []
    paths: dict[str, list[str]] = {}
    depth_of: dict[str, int] = {}
    queue: list[tuple[str, Any, int]] = [(str(k), v, 0) for k, v in spec.items()]
    seen = 0
    while queue and seen < MAX_WALK:
        path, value, depth = queue.pop(0)
        seen += 1
        leaf = path.rsplit(".", 1)[-1]
        if isinstance(value, Mapping):
            if leaf.endswith("Ref") and value.get("name"):
                _keep(paths, depth_of, path, f"{value.get('kind', '')}/{value['name']}".lstrip("/"), depth)
            elif _PAIR_MAPS.search(leaf) and value and all(_render_scalarish(v) for v in value.values()):
                pairs = ", ".join(f"{k}={_render_scalarish(v)}" for k, v in sorted(value.items()))
                _keep(paths, depth_of, path, pairs, depth)
            elif depth < MAX_SPEC_DEPTH:
                queue.extend((f"{path}.{k}", v, depth + 1) for k, v in value.items())
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            if depth < MAX_SPEC_DEPTH:
                queue.extend((f"{path}.{k}", v, depth + 1) for item in value[:MAX_WALK] for k, v in item.items())
        else:
            rendered = _render_scalarish(value)
            if rendered is not None:
                _keep(paths, depth_of, path, rendered, depth)
    ordered = sorted(paths, key=lambda p: depth_of[p])[:MAX_SPEC_FIELDS]
    return [
        f"{path}: {short(', '.join(paths[path][:MAX_LIST_ITEMS]), limit=MAX_FIELD_CHARS)}"
        for path in sorted(ordered, key=list(paths).index)
    ]


MAX_SPEC_DEPTH: Final = 5
#: One rendered field of a spec, values joined.
MAX_FIELD_CHARS: Final = 240
#: Values visited in one spec, whatever its size.
MAX_WALK: Final = 2000


def _keep(paths: dict[str, list[str]], depth_of: dict[str, int], path: str, value: str, depth: int) -> None:
    values = paths.setdefault(path, [])
    depth_of.setdefault(path, depth)
    if value not in values and len(values) < MAX_LIST_ITEMS:
        values.append(value)


def _render_scalarish(value: Any) -> str | None:
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(value, str):
        return None if value == REDACTED or not value.strip() else short(value, limit=MAX_VALUE_CHARS)
    if isinstance(value, list) and value and all(isinstance(v, str | int | float | bool) for v in value):
        items = [str(v) for v in value if v != REDACTED][:MAX_LIST_ITEMS]
        return ", ".join(short(i, limit=MAX_VALUE_CHARS) for i in items) or None
    return None
