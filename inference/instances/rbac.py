"""Who may do what: Roles and ClusterRoles as ``verbs on resources``, bindings as role and subjects.

The words security questions use ("who can read Secrets?", "who is bound to cluster-admin?");
:func:`subjects_of` also gives a binding's ``subjects`` metadata (:func:`.document.facts_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubevec.inference.instances.summary import MAX_SPEC_FIELDS, InstancePolicy, Summariser, label_selector
from kubevec.inference.redaction import Redacted


def _role(source: Redacted, _: InstancePolicy) -> list[str]:
    """Rules as ``verbs on resources``: what an agent asks ("who can read Secrets?")."""
    obj = source.obj
    rules = []
    raw_rules = obj.get("rules")
    for rule in raw_rules if isinstance(raw_rules, list) else []:
        if not isinstance(rule, Mapping):
            continue
        verbs = ", ".join(map(str, rule.get("verbs") or []))
        groups = [str(g) for g in rule.get("apiGroups") or [] if g]
        things = [
            f"{r}.{groups[0]}" if len(groups) == 1 and groups[0] != "*" else str(r) for r in rule.get("resources") or []
        ]
        things += [str(u) for u in rule.get("nonResourceURLs") or []]
        names = rule.get("resourceNames")
        named = f" named {', '.join(map(str, names))}" if isinstance(names, list) and names else ""
        rules.append(f"{verbs} on {', '.join(things) or '-'}{named}")
    out = []
    if rules:
        more = len(rules) - MAX_SPEC_FIELDS
        out.append("rules: " + "; ".join(rules[:MAX_SPEC_FIELDS]) + (f" (+{more} more)" if more > 0 else ""))
    aggregation = obj.get("aggregationRule")
    if isinstance(aggregation, Mapping):
        selectors = [label_selector(s) for s in aggregation.get("clusterRoleSelectors") or []]
        out.append("aggregates roles labelled: " + "; ".join(selectors))
    return out


def _binding(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    role = obj.get("roleRef") or {}
    out = [f"role: {role.get('kind')}/{role.get('name')}"] if isinstance(role, Mapping) else []
    subjects = subjects_of(obj)
    if subjects:
        out.append("subjects: " + ", ".join(subjects[:MAX_SPEC_FIELDS]))
    return out


def subjects_of(obj: Mapping[str, Any]) -> list[str]:
    out = []
    for subject in obj.get("subjects") or []:
        if isinstance(subject, Mapping) and subject.get("name"):
            where = f"{subject['namespace']}/" if subject.get("namespace") else ""
            out.append(f"{subject.get('kind', 'User')} {where}{subject['name']}")
    return out


SUMMARISERS: Final[dict[tuple[str, str], Summariser]] = {
    ("rbac.authorization.k8s.io", "Role"): _role,
    ("rbac.authorization.k8s.io", "ClusterRole"): _role,
    ("rbac.authorization.k8s.io", "RoleBinding"): _binding,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _binding,
}
