"""What bounds, scales or stores for other objects: quotas, limit ranges, disruption budgets,
autoscalers, volume claims, and the key names of Secrets and ConfigMaps.

Amounts and targets as written (``hard: cpu=4, memory=8Gi``; ``replicas: 2-10``; ``size: 10Gi``).
A Secret's or ConfigMap's values never got here (the gate dropped them); its key names say what it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kubevec.inference.instances.summary import MAX_LIST_ITEMS, InstancePolicy, Summariser, label_selector
from kubevec.inference.redaction import Redacted


def _disruption_budget(source: Redacted, _: InstancePolicy) -> list[str]:
    spec = source.obj.get("spec") or {}
    out = [f"{key}: {spec[key]}" for key in ("minAvailable", "maxUnavailable") if key in spec]
    out.append(f"selector: {label_selector(spec.get('selector'))}")
    # what a budget is for, in the words asked ("what limits evictions of the database pods")
    out.append("protects: the Pods it selects from voluntary disruptions (evictions, node drains)")
    return out


def _quota(source: Redacted, _: InstancePolicy) -> list[str]:
    spec = source.obj.get("spec") or {}
    out = []
    hard = spec.get("hard")
    if isinstance(hard, Mapping) and hard:
        out.append("hard: " + ", ".join(f"{k}={v}" for k, v in sorted(hard.items())))
    if spec.get("scopes"):
        out.append("scopes: " + ", ".join(map(str, spec["scopes"])))
    return out


def _limit_range(source: Redacted, _: InstancePolicy) -> list[str]:
    out = []
    for limit in (source.obj.get("spec") or {}).get("limits") or []:
        if not isinstance(limit, Mapping):
            continue
        parts = [
            f"{key} " + " ".join(f"{k}={v}" for k, v in sorted(limit[key].items()))
            for key in ("default", "defaultRequest", "min", "max")
            if isinstance(limit.get(key), Mapping)
        ]
        out.append(f"{limit.get('type', 'Container')} limits: " + "; ".join(parts))
    return out


def _autoscaler(source: Redacted, _: InstancePolicy) -> list[str]:
    spec = source.obj.get("spec") or {}
    out = []
    target = spec.get("scaleTargetRef")
    if isinstance(target, Mapping):
        out.append(f"scales: {target.get('kind')}/{target.get('name')}")
    out.append(f"replicas: {spec.get('minReplicas', 1)}-{spec.get('maxReplicas', '?')}")
    metrics = []
    for metric in spec.get("metrics") or []:
        if not isinstance(metric, Mapping):
            continue
        body = metric.get(str(metric.get("type", "")).replace("Resource", "resource").lower()) or metric.get("resource")
        if not isinstance(body, Mapping):
            metrics.append(str(metric.get("type")))
            continue
        name = body.get("name") or (body.get("metric") or {}).get("name")
        goal = body.get("target") or {}
        amount = goal.get("averageUtilization")
        metrics.append(
            f"{name} {amount}% utilization" if amount is not None else f"{name} {goal.get('type', '')}".strip()
        )
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.append(f"cpu {spec['targetCPUUtilizationPercentage']}% utilization")
    if metrics:
        out.append("metrics: " + ", ".join(metrics[:MAX_LIST_ITEMS]))
    return out


def _pvc(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    spec = obj.get("spec") or {}
    out = []
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if size:
        out.append(f"size: {size}")
    if spec.get("storageClassName"):
        out.append(f"storageClass: {spec['storageClassName']}")
    if spec.get("accessModes"):
        out.append("accessModes: " + ", ".join(map(str, spec["accessModes"])))
    return out


def _keys_only(source: Redacted, policy: InstancePolicy) -> list[str]:
    obj, keys = source.obj, source.data_keys
    out = []
    if obj.get("kind") == "Secret" and obj.get("type"):
        out.append(f"type: {obj['type']}")
    if keys and (obj.get("kind") == "Secret" or policy.configmap_keys):
        out.append("keys: " + ", ".join(keys[:20]))
    return out


SUMMARISERS: Final[dict[tuple[str, str], Summariser]] = {
    ("", "PersistentVolumeClaim"): _pvc,
    ("", "Secret"): _keys_only,
    ("", "ConfigMap"): _keys_only,
    ("policy", "PodDisruptionBudget"): _disruption_budget,
    ("", "ResourceQuota"): _quota,
    ("", "LimitRange"): _limit_range,
    ("autoscaling", "HorizontalPodAutoscaler"): _autoscaler,
}
