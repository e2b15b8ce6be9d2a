"""What an object references and what references it, from the stored payloads alone (no API calls).

Instance payloads carry their outgoing references (``refs`` and ``ref_relations``, see
``inference/references.py``), a Service its ``selector`` and a workload its ``pod_labels``. From
those, one store filter per step answers both directions:

- ``out`` (what it depends on): the object's own ``refs`` looked up by kind, namespace and name,
  and, for a Service, the workloads and Pods its selector matches;
- ``in`` (what depends on it, "what breaks if I delete this Secret?"): the objects whose ``refs``
  contain its key, and, for a workload or Pod, the Services that select it.

A ``calls`` reference (an address in a workload's env or arguments) names a Service only if the
store holds it: the builder saw one object, so ``cartservice`` or ``example.com`` is a candidate until
it is looked up here; a candidate the store lacks is no edge. Its edge carries ``via``, the variable
(or ``args``) that named it. A store an earlier builder wrote says ``connects-to``: read as ``calls``.

A second or third hop continues in the direction of the first (dependants of dependants), so the
answer never wanders to siblings. A reference to an object the store does not hold (a Secret
when no SyncPolicy opts Secrets in, or a dangling reference) is reported with ``stored: false``;
the subject itself may be such an object, named by its key ``Kind/namespace/name``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, Literal

from kubevec.backends import VectorStore
from kubevec.backends.filters import And, Eq, Filter, In, Or, all_of
from kubevec.core import fields
from kubevec.core.errors import SearchError
from kubevec.inference.documents import INSTANCES
from kubevec.inference.identity import object_key, parse_instance_id, parse_object_key
from kubevec.inference.references import (
    CALLS,
    EVERY,
    POD_SELECTORS,
    RENAMED_RELATIONS,
    SELECTOR_RELATIONS,
    evidence_of,
)
from kubevec.query.views import View

Direction = Literal["out", "in", "both"]
DIRECTIONS: Final = ("out", "in", "both")
MAX_HOPS: Final = 3
MAX_EDGES: Final = 200
#: Objects whose pods a Service can select, besides Pods themselves.
_PAGE: Final = 500


@dataclasses.dataclass(frozen=True, kw_only=True)
class Node:
    """One object: stored (with its document id and payload) or only named by a reference."""

    kind: str
    namespace: str | None
    name: str
    cluster: str | None
    id: str | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        return object_key(kind=self.kind, namespace=self.namespace, name=self.name)

    @property
    def identity(self) -> tuple[str, str]:
        """Keys repeat across clusters (several controllers can share a store); this does not."""
        return (self.cluster or "", self.key)

    @property
    def label(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        health = fields.HEALTH.of(self.metadata)
        suffix = f" [{health}]" if health else "" if self.id else " (not stored)"
        return f"{self.kind} {where}{self.name}{suffix}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "id": self.id,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "cluster": self.cluster,
            "stored": self.id is not None,
        }
        for field in ("health", "ready", "phase"):
            if field in self.metadata:
                out[field] = self.metadata[field]
        return out

    @classmethod
    def of_record(cls, id: str, metadata: Mapping[str, Any]) -> Node:
        return cls(
            kind=fields.KIND.of(metadata),
            namespace=fields.NAMESPACE.of(metadata) or None,
            name=fields.NAME.of(metadata),
            cluster=fields.CLUSTER.of(metadata) or None,
            id=id,
            metadata=metadata,
        )


#: One neighbour found in one step: the relation, the neighbour, and what named it (``via``, or "").
Found = tuple[str, Node, str]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Edge:
    """``source`` references ``target`` by ``relation``; ``direction`` says which end is the new one."""

    hop: int
    direction: Literal["out", "in"]
    relation: str
    source: Node
    target: Node
    #: What in the source names the target, for a relation read from a value (``calls``): env variables or ``args``.
    via: str = ""

    @property
    def neighbour(self) -> Node:
        return self.target if self.direction == "out" else self.source

    @property
    def evidence(self) -> str:
        """``definite`` or ``inferred``: how much to trust this edge when asking "what breaks if it goes"."""
        return evidence_of(self.relation)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hop": self.hop,
            "direction": self.direction,
            "relation": self.relation,
            "evidence": self.evidence,
            "from": self.source.to_json(),
            "to": self.target.to_json(),
        }
        if self.via:
            out["via"] = self.via
        return out


@dataclasses.dataclass(frozen=True, kw_only=True)
class Related:
    subject: Node
    edges: tuple[Edge, ...]
    hops: int
    direction: Direction
    truncated: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject.to_json(),
            "hops": self.hops,
            "direction": self.direction,
            "edges": [edge.to_json() for edge in self.edges],
            "truncated": self.truncated,
        }

    def lines(self) -> list[str]:
        """Text for people: one line per edge, indented by hop, ``->`` for depends-on, ``<-`` for depended-on-by."""
        out = [self.subject.label]
        for edge in self.edges:
            arrow = "->" if edge.direction == "out" else "<-"
            guess = " (inferred)" if edge.evidence == "inferred" else ""
            via = f" via {edge.via}" if edge.via else ""
            out.append(f"{'  ' * edge.hop}{arrow} {edge.relation:<18} {edge.neighbour.label}{via}{guess}")
        if len(out) == 1:
            out.append("  (no relationships in the store)")
        if self.truncated:
            out.append(f"  ... stopped at {len(self.edges)} relationships")
        return out


class Relationships:
    """The ``related`` query over one instances collection."""

    def __init__(self, *, store: VectorStore, collection: str, view: View | None = None) -> None:
        """``view`` (a caller's) is ANDed into every read: what it may not see is neither an edge nor an end."""
        self.store = store
        self.collection = collection
        self.view = view
        self.hidden = view is not None and not view.sees(INSTANCES)

    async def related(
        self,
        subject: str,
        *,
        hops: int = 1,
        direction: Direction = "both",
        cluster: str | None = None,
        limit: int = MAX_EDGES,
    ) -> Related:
        if not 1 <= hops <= MAX_HOPS:
            raise SearchError(f"hops must be between 1 and {MAX_HOPS}, got {hops}")
        if direction not in DIRECTIONS:
            raise SearchError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        start = await self._subject(subject, cluster=cluster)
        if self.hidden:
            return Related(subject=start, edges=(), hops=hops, direction=direction, truncated=False)
        edges: list[Edge] = []
        seen = {start.identity}
        frontier: list[tuple[Node, Literal["out", "in"]]] = []
        if direction in ("out", "both"):
            frontier.append((start, "out"))
        if direction in ("in", "both"):
            frontier.append((start, "in"))
        truncated = False
        for hop in range(1, hops + 1):
            following: list[tuple[Node, Literal["out", "in"]]] = []
            for node, way in frontier:
                found = await (self._outgoing(node) if way == "out" else self._incoming(node))
                for relation, neighbour, via in sorted(found, key=_reading_order):
                    if neighbour.identity in seen:
                        continue
                    if len(edges) >= limit:
                        truncated = True
                        break
                    seen.add(neighbour.identity)
                    source, target = (node, neighbour) if way == "out" else (neighbour, node)
                    edges.append(Edge(hop=hop, direction=way, relation=relation, source=source, target=target, via=via))
                    following.append((neighbour, way))
            frontier = following
        return Related(subject=start, edges=tuple(edges), hops=hops, direction=direction, truncated=truncated)

    # -- the subject -------------------------------------------------------------------------------

    async def _subject(self, subject: str, *, cluster: str | None) -> Node:
        text = subject.strip()
        if parse_instance_id(text) is not None:
            records = [] if self.hidden else await self.store.get(self.collection, [text])
            if (
                not records
                or (cluster is not None and fields.CLUSTER.of(records[0].metadata) != cluster)
                or (self.view is not None and not self.view.allows(INSTANCES, metadata=records[0].metadata))
            ):
                raise SearchError(f"No instance document {text!r}")
            return Node.of_record(records[0].id, records[0].metadata)
        parsed = parse_object_key(text)
        if parsed is None:
            raise SearchError(
                f"{text!r} is neither an instance id (cluster/namespace/group/version/Kind/name) "
                "nor an object key (Kind/namespace/name, _cluster for cluster-scoped objects)"
            )
        kind, namespace, name = parsed
        named = Node(kind=kind, namespace=namespace, name=name, cluster=cluster)
        stored = {} if self.hidden else await self._lookup([named], cluster=cluster)
        found = stored.get(named.key, [])
        if len(found) > 1 and cluster is None:
            clusters = sorted({str(m.cluster) for m in found})
            raise SearchError(f"{text} exists in several clusters ({', '.join(clusters)}); pass a cluster")
        return found[0] if found else named

    # -- one step ----------------------------------------------------------------------------------

    async def _outgoing(self, node: Node) -> list[Found]:
        metadata = node.metadata
        named = []
        for key, relation, via in _references(metadata):
            parsed = parse_object_key(key)
            if parsed is not None:
                kind, namespace, name = parsed
                named.append((relation, Node(kind=kind, namespace=namespace, name=name, cluster=node.cluster), via))
        stored = await self._lookup([n for _, n, _ in named], cluster=node.cluster)
        out: list[Found] = [
            (relation, (stored.get(target.key) or [target])[0], via)
            for relation, target, via in named
            if relation != CALLS or target.key in stored  # a candidate address the cluster has no Service for
        ]
        relation = SELECTOR_RELATIONS.get(node.kind, "selects")
        selector = fields.SELECTOR.of(metadata)
        where = _where(node)
        if selector and where is not None:
            selected: list[Filter] = (
                [In("kind", (*_POD_OWNERS, "Pod"))]
                if selector == [EVERY]
                else [
                    And(tuple(Eq("pod_labels", s) for s in selector)),
                    And((Eq("kind", "Pod"), *(Eq("labels", s) for s in selector))),
                ]
            )
            scope = self._scope(node.cluster, *where, Or(tuple(selected)))
            async for record in self.store.iter_records(self.collection, filter=scope, page_size=_PAGE):
                out.append((relation, Node.of_record(record.id, record.metadata), ""))
        services = fields.SERVICE_SELECTOR.of(metadata)
        if services and where is not None:
            labels = () if services == [EVERY] else tuple(Eq("labels", s) for s in services)
            scope = self._scope(node.cluster, *where, Eq("kind", "Service"), *labels)
            async for record in self.store.iter_records(self.collection, filter=scope, page_size=_PAGE):
                out.append((relation, Node.of_record(record.id, record.metadata), ""))
        return out

    async def _incoming(self, node: Node) -> list[Found]:
        out: list[Found] = []
        scope = self._scope(node.cluster, Eq("refs", node.key))
        async for record in self.store.iter_records(self.collection, filter=scope, page_size=_PAGE):
            source = Node.of_record(record.id, record.metadata)
            for key, relation, via in _references(record.metadata):
                if key == node.key and (relation != CALLS or node.id is not None):
                    out.append((relation, source, via))
        if not node.namespace:
            return out
        labels = set((fields.POD_LABELS if node.kind != "Pod" else fields.LABELS).of(node.metadata))
        if labels or node.kind in _POD_OWNERS or node.kind == "Pod":
            # Selectors in the node's namespace, and monitors, which may look in from another.
            local = And((Eq("namespace", node.namespace), In("kind", tuple(POD_SELECTORS))))
            scope = self._scope(node.cluster, Or((local, Eq("kind", "PodMonitor"))))
            async for record in self.store.iter_records(self.collection, filter=scope, page_size=_PAGE):
                selector = set(fields.SELECTOR.of(record.metadata))
                selecting = Node.of_record(record.id, record.metadata)
                if _reaches(selecting, node.namespace) and selector and (selector == {EVERY} or selector <= labels):
                    out.append((SELECTOR_RELATIONS.get(selecting.kind, "selects"), selecting, ""))
        if node.kind == "Service":
            own = set(fields.LABELS.of(node.metadata))
            scope = self._scope(node.cluster, Eq("kind", "ServiceMonitor"))
            async for record in self.store.iter_records(self.collection, filter=scope, page_size=_PAGE):
                selector = set(fields.SERVICE_SELECTOR.of(record.metadata))
                monitor = Node.of_record(record.id, record.metadata)
                if _reaches(monitor, node.namespace) and selector and (selector == {EVERY} or selector <= own):
                    out.append((SELECTOR_RELATIONS.get(monitor.kind, "selects"), monitor, ""))
        return out

    async def _lookup(self, named: Iterable[Node], *, cluster: str | None) -> dict[str, list[Node]]:
        """Stored documents for named objects, by key; a namespaced reference to a kind that turns out
        cluster-scoped (custom resources do not say) matches the cluster-scoped object."""
        wanted = {n.key: n for n in named}
        if not wanted:
            return {}
        names = sorted({n.name for n in wanted.values()})
        found: dict[str, list[Node]] = {}
        scope = self._scope(cluster, In("name", tuple(names)))
        async for record in self.store.iter_records(self.collection, filter=scope, page_size=_PAGE):
            node = Node.of_record(record.id, record.metadata)
            if node.key in wanted:
                found.setdefault(node.key, []).append(node)
            elif node.namespace is None:
                for key, want in wanted.items():
                    if want.kind == node.kind and want.name == node.name:
                        found.setdefault(key, []).append(node)
        return found

    def _scope(self, cluster: str | None, *filters: Filter) -> Filter:
        scope = all_of(Eq("cluster", cluster) if cluster else None, *filters)
        assert scope is not None, "a related scope names at least one condition"
        restricted = self.view.restrict(INSTANCES, scope) if self.view is not None else scope
        return scope if restricted is None else restricted


#: Kinds whose pod template a selector reaches (their ``pod_labels``), besides Pods themselves.
_POD_OWNERS: Final = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob")


def _where(node: Node) -> tuple[Filter, ...] | None:
    """The namespaces a node's selector looks in, as filters: its own unless its payload names others
    (``selector_namespaces``, ``*`` for all); None when it has no namespace to look in."""
    namespaces = fields.SELECTOR_NAMESPACES.of(node.metadata)
    if namespaces == [EVERY]:
        return ()
    if namespaces:
        return (In("namespace", tuple(namespaces)),)
    return (Eq("namespace", node.namespace),) if node.namespace else None


def _reaches(selecting: Node, namespace: str) -> bool:
    """Whether a selecting object's selector looks in ``namespace``."""
    namespaces = fields.SELECTOR_NAMESPACES.of(selecting.metadata)
    if namespaces:
        return namespaces == [EVERY] or namespace in namespaces
    return selecting.namespace == namespace


#: Owners before what they own, so a Service reached through a Deployment and its Pods is shown once, from the Deployment.
_LATER_KINDS: Final = {"ReplicaSet": 1, "ControllerRevision": 1, "Job": 1, "Pod": 2}


def _reading_order(found: Found) -> tuple[int, str, str, str, str]:
    relation, node, _ = found
    return (_LATER_KINDS.get(node.kind, 0), node.kind, node.namespace or "", node.name, relation)


def _references(metadata: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(key, relation, via) of each stored reference; a renamed relation under its name of today, and
    ``call_evidence`` (one per ``calls`` reference, in order) as the ``via`` of each."""
    evidence = iter(fields.CALL_EVIDENCE.of(metadata))
    for key, stored in zip(fields.REFS.of(metadata), fields.REF_RELATIONS.of(metadata), strict=False):
        relation = RENAMED_RELATIONS.get(stored, stored)
        via = next(evidence, "") if stored == CALLS else ""
        yield key, relation, via
