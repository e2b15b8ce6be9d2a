"""Kubernetes RBAC evaluated here, from the cluster's Roles and bindings, the way its own authorizer does.

Asking SubjectAccessReview about every (namespace, resource) pair in the index costs one request
per pair per caller: a thousand placements made a thousand reviews before a new caller's first
answer. The RBAC objects are few and shared by every caller, so they are read once per TTL and each
caller's rules are matched here (``k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac``: subjects,
role references, verbs, API groups, resources, resource names, non-resource URLs). Only RBAC is
known here: a grant made by a webhook or ABAC authorizer is not, which is why the two coarse
questions (capabilities, cluster-wide list of everything) still go to SubjectAccessReview, and
why ``reviews`` mode exists for clusters that grant namespaces outside RBAC.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Final

#: Members of this group pass every check without RBAC (the API server's privileged-group authorizer).
SUPERUSERS: Final = "system:masters"


@dataclasses.dataclass(frozen=True)
class Rule:
    """One PolicyRule."""

    verbs: frozenset[str]
    api_groups: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    resource_names: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()

    def allows(self, *, verb: str, group: str, resource: str) -> bool:
        """A request without a name (``list``): the name asked about is ``""``, so a rule limited to resource
        names allows it only when ``""`` is one of them (Kubernetes' ``ResourceNameMatches``)."""
        return (
            _has(self.verbs, verb)
            and _has(self.api_groups, group)
            and _has(self.resources, resource)
            and (not self.resource_names or "" in self.resource_names)
        )

    def allows_path(self, *, verb: str, path: str) -> bool:
        if not _has(self.verbs, verb):
            return False
        return any(url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])) for url in self.urls)


def _has(values: frozenset[str], wanted: str) -> bool:
    return "*" in values or wanted in values


def _rules(body: Mapping[str, Any]) -> tuple[Rule, ...]:
    out = []
    for raw in body.get("rules") or ():
        if not isinstance(raw, Mapping):
            continue
        out.append(
            Rule(
                verbs=_strings(raw.get("verbs")),
                api_groups=_strings(raw.get("apiGroups")),
                resources=_strings(raw.get("resources")),
                resource_names=_strings(raw.get("resourceNames")),
                urls=_strings(raw.get("nonResourceURLs")),
            )
        )
    return tuple(out)


def _strings(value: Any) -> frozenset[str]:
    return frozenset(str(v) for v in value or () if isinstance(v, str))


@dataclasses.dataclass(frozen=True)
class Grants:
    """The rules one identity holds: cluster-wide (ClusterRoleBindings) and per namespace (RoleBindings)."""

    superuser: bool
    cluster: tuple[Rule, ...]
    namespaces: Mapping[str, tuple[Rule, ...]]

    def allows(self, *, verb: str, group: str, resource: str, namespace: str | None = None) -> bool:
        """``namespace`` None asks cluster-wide (what a cluster-scoped object or an all-namespace list needs)."""
        if self.superuser:
            return True
        if any(rule.allows(verb=verb, group=group, resource=resource) for rule in self.cluster):
            return True
        if namespace is None:
            return False
        return any(
            rule.allows(verb=verb, group=group, resource=resource) for rule in self.namespaces.get(namespace, ())
        )

    def allows_path(self, *, verb: str, path: str) -> bool:
        return self.superuser or any(rule.allows_path(verb=verb, path=path) for rule in self.cluster)


@dataclasses.dataclass(frozen=True)
class _Binding:
    namespace: str | None  # None: a ClusterRoleBinding
    role_kind: str
    role_name: str


class RbacSnapshot:
    """The cluster's RBAC objects at one moment, indexed by subject so a caller's grants cost its bindings only."""

    def __init__(
        self,
        *,
        cluster_roles: Iterable[Mapping[str, Any]] = (),
        cluster_role_bindings: Iterable[Mapping[str, Any]] = (),
        roles: Iterable[Mapping[str, Any]] = (),
        role_bindings: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        self._cluster_roles = {_name(body): _rules(body) for body in cluster_roles}
        self._roles = {(_namespace(body), _name(body)): _rules(body) for body in roles}
        self._by_subject: dict[tuple[str, str], list[_Binding]] = {}
        bindings = 0
        for body in cluster_role_bindings:
            self._index(body, namespace=None)
            bindings += 1
        for body in role_bindings:
            self._index(body, namespace=_namespace(body))
            bindings += 1
        #: How many RBAC objects it holds (logged when read).
        self.objects = len(self._cluster_roles) + len(self._roles) + bindings

    def _index(self, body: Mapping[str, Any], *, namespace: str | None) -> None:
        ref = body.get("roleRef") or {}
        kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
        if kind not in ("ClusterRole", "Role") or (kind == "Role" and namespace is None):
            return
        binding = _Binding(namespace=namespace, role_kind=kind, role_name=name)
        for subject in body.get("subjects") or ():
            key = _subject_key(subject, namespace=namespace)
            if key is not None:
                self._by_subject.setdefault(key, []).append(binding)

    def grants(self, *, user: str, groups: Iterable[str]) -> Grants:
        groups = tuple(groups)
        bindings = [
            *self._by_subject.get(("User", user), ()),
            *(b for g in groups for b in self._by_subject.get(("Group", g), ())),
        ]
        cluster: list[Rule] = []
        namespaces: dict[str, list[Rule]] = {}
        for binding in bindings:
            if binding.role_kind == "ClusterRole":
                rules = self._cluster_roles.get(binding.role_name, ())
            else:
                rules = self._roles.get((binding.namespace or "", binding.role_name), ())
            if binding.namespace is None:
                cluster.extend(rules)
            else:
                namespaces.setdefault(binding.namespace, []).extend(rules)
        return Grants(
            superuser=SUPERUSERS in groups,
            cluster=tuple(cluster),
            namespaces={ns: tuple(rules) for ns, rules in namespaces.items()},
        )


def _subject_key(subject: Any, *, namespace: str | None) -> tuple[str, str] | None:
    """A subject as the user or group name it matches; a ServiceAccount is the user it authenticates as."""
    if not isinstance(subject, Mapping):
        return None
    kind, name = subject.get("kind"), subject.get("name")
    if not isinstance(name, str) or not name:
        return None
    if kind in ("User", "Group"):
        return (kind, name)
    if kind == "ServiceAccount":
        account_namespace = subject.get("namespace") or namespace
        if not account_namespace:
            return None
        return ("User", f"system:serviceaccount:{account_namespace}:{name}")
    return None


def _name(body: Mapping[str, Any]) -> str:
    return str((body.get("metadata") or {}).get("name", ""))


def _namespace(body: Mapping[str, Any]) -> str:
    return str((body.get("metadata") or {}).get("namespace", ""))
