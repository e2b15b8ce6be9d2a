"""SyncPolicy: which resources, namespaces and objects are indexed, and what their documents may hold.

Several SyncPolicy objects merge conservatively: includes and excludes are unions (an empty
include list means "everything"), every label selector must match, annotation allow-lists are
unioned, and ConfigMap key names are indexed only if no policy turns them off. With no policy at
all, the defaults apply: everything listable except the kinds in :data:`DEFAULT_EXCLUDED`.

Secrets are indexed only when a SyncPolicy sets ``secrets: true`` (then only their metadata, type
and key names). They are never *watched*, even then: kopf would stream every Secret's data into
the process on every change. Opted-in Secrets are read by the resync, which runs at once when a
policy changes and then every resync interval.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kubevec.core.errors import PolicyError
from kubevec.inference.bodies import Body, metadata_of
from kubevec.inference.identity import CORE, ObjectName
from kubevec.inference.instances import InstancePolicy

GROUP: Final = "kubevec.io"
VERSION: Final = "v1alpha1"
PLURAL: Final = "syncpolicies"

#: (group, plural) never indexed as instances: churny, internal, or not objects at all.
DEFAULT_EXCLUDED: Final = frozenset(
    {
        ("", "events"),
        ("events.k8s.io", "events"),
        ("coordination.k8s.io", "leases"),
        ("", "endpoints"),
        ("discovery.k8s.io", "endpointslices"),
        ("", "componentstatuses"),
        ("", "bindings"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("kopf.dev", "kopfpeerings"),
        ("kopf.dev", "clusterkopfpeerings"),
        ("zalando.org", "kopfpeerings"),
        ("zalando.org", "clusterkopfpeerings"),
        (GROUP, PLURAL),
    }
)
#: (group, plural) indexed only when a SyncPolicy opts in, and then only by the resync.
SECRETS: Final = ("", "secrets")


def listable(
    *,
    group: str,
    plural: str,
    verbs: tuple[str, ...] | list[str],
    preferred: bool = True,
    groups: Sequence[str] | None = None,
) -> bool:
    """The static part of "are this kind's instances indexed": listable, preferred, not excluded by default,
    and in ``groups`` (the named API groups RBAC grants; None: all; the core group always)."""
    if groups is not None and group and group not in groups:
        return False
    return preferred and "list" in verbs and "watch" in verbs and (group, plural) not in DEFAULT_EXCLUDED


def watchable(
    *,
    group: str,
    plural: str,
    verbs: tuple[str, ...] | list[str],
    preferred: bool = True,
    groups: Sequence[str] | None = None,
) -> bool:
    """Whether kopf watches a kind: every listable one but Secrets (read by the resync only, when opted in)."""
    listed = listable(group=group, plural=plural, verbs=verbs, preferred=preferred, groups=groups)
    return (group, plural) != SECRETS and listed


class ResourcePattern(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group: str = Field(default="*", description="API group glob; 'core' or '' for the core group")
    kind: str = Field(default="*", description="Kind or plural glob")


class LabelExpression(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    operator: str = Field(pattern="^(In|NotIn|Exists|DoesNotExist)$")
    values: list[str] = Field(default_factory=list)


class LabelSelector(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matchLabels: dict[str, str] = Field(default_factory=dict)
    matchExpressions: list[LabelExpression] = Field(default_factory=list)

    def matches(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.matchLabels.items()):
            return False
        for expr in self.matchExpressions:
            present = expr.key in labels
            if expr.operator == "In" and not (present and labels[expr.key] in expr.values):
                return False
            if expr.operator == "NotIn" and present and labels[expr.key] in expr.values:
                return False
            if expr.operator == "Exists" and not present:
                return False
            if expr.operator == "DoesNotExist" and present:
                return False
        return True


class Selection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    include: list[ResourcePattern] = Field(default_factory=list)
    exclude: list[ResourcePattern] = Field(default_factory=list)


class NamespaceSelection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    include: list[str] = Field(default_factory=list, description="namespace globs; empty: all")
    exclude: list[str] = Field(default_factory=list)


class SyncPolicySpec(BaseModel):
    """The ``spec`` of a SyncPolicy object (camelCase, as in the CRD)."""

    model_config = ConfigDict(extra="forbid")

    resources: Selection = Field(default_factory=Selection)
    namespaces: NamespaceSelection = Field(default_factory=NamespaceSelection)
    labelSelector: LabelSelector | None = None
    annotationAllowlist: list[str] = Field(default_factory=list)
    configMapKeys: bool = True
    secrets: bool = Field(default=False, description="index Secret metadata, type and key names (never values)")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SyncPolicy:
    """One SyncPolicy object as the controller keeps it: its name, parsed spec and generation."""

    name: str
    spec: SyncPolicySpec
    generation: int | None

    @classmethod
    def from_body(cls, body: Body) -> SyncPolicy:
        """Parse an object from the API; raises :class:`PolicyError` naming it when the spec is invalid."""
        who = ObjectName.of(metadata_of(body))
        return cls(name=who.name, spec=parse_spec(who.name, body.get("spec")), generation=who.generation)


def parse_spec(name: str, spec: Any) -> SyncPolicySpec:
    try:
        return SyncPolicySpec.model_validate(spec or {})
    except ValidationError as exc:
        raise PolicyError(f"SyncPolicy {name} is invalid: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc


@dataclasses.dataclass(frozen=True)
class EffectivePolicy:
    """All SyncPolicies merged; immutable, so a new one replaces the old atomically."""

    specs: tuple[SyncPolicySpec, ...] = ()

    @classmethod
    def merge(cls, specs: Iterable[SyncPolicySpec]) -> EffectivePolicy:
        return cls(tuple(specs))

    def watches(self, *, group: str, kind: str, plural: str) -> bool:
        """Whether a kind's instances are indexed at all."""
        if (group, plural) in DEFAULT_EXCLUDED:
            return False
        if (group, plural) == SECRETS and not any(spec.secrets for spec in self.specs):
            return False
        includes = [p for spec in self.specs for p in spec.resources.include]
        excludes = [p for spec in self.specs for p in spec.resources.exclude]
        if includes and not any(_matches_resource(p, group, kind, plural) for p in includes):
            return False
        return not any(_matches_resource(p, group, kind, plural) for p in excludes)

    def admits(self, obj: Body) -> bool:
        """Whether one object passes the namespace and label rules."""
        who = ObjectName.of(metadata_of(obj))
        namespace = who.namespace
        if namespace:
            includes = [n for spec in self.specs for n in spec.namespaces.include]
            excludes = [n for spec in self.specs for n in spec.namespaces.exclude]
            if includes and not any(fnmatch.fnmatchcase(namespace, pattern) for pattern in includes):
                return False
            if any(fnmatch.fnmatchcase(namespace, pattern) for pattern in excludes):
                return False
        return all(spec.labelSelector.matches(who.labels) for spec in self.specs if spec.labelSelector is not None)

    @property
    def instance_policy(self) -> InstancePolicy:
        allow = sorted({a for spec in self.specs for a in spec.annotationAllowlist})
        return InstancePolicy(
            annotation_allowlist=tuple(allow), configmap_keys=all(spec.configMapKeys for spec in self.specs)
        )


def _matches_resource(pattern: ResourcePattern, group: str, kind: str, plural: str) -> bool:
    groups: Sequence[str] = (group, CORE) if group == "" else (group,)
    group_ok = any(fnmatch.fnmatchcase(g, pattern.group) for g in groups) or (pattern.group == "" and group == "")
    kind_ok = fnmatch.fnmatchcase(kind, pattern.kind) or fnmatch.fnmatchcase(plural, pattern.kind)
    return group_ok and kind_ok
