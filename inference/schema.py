"""Reading OpenAPI v3 schemas (CRD ``openAPIV3Schema`` and the apiserver's ``/openapi/v3``).

Schemas in the wild are odd: built-in kinds reference ``#/components/schemas/...`` through
``$ref`` and ``allOf``; CRDs carry ``x-kubernetes-preserve-unknown-fields``, ``anyOf`` and
megabytes of nesting (Argo Workflows inlines the whole Pod spec many times). Everything here is
bounded (depth and node budget) and tolerant: an unexpected shape is skipped, never an exception.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

MAX_WALK_DEPTH: Final = 12
MAX_WALK_NODES: Final = 20_000
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
_MARKUP = re.compile(r"`|\*\*|<[^>]+>|\[([^\]]+)\]\([^)]+\)")
_SPACE = re.compile(r"\s+")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Field:
    """One field of a schema (``path`` is dotted from the root), with what makes it informative."""

    path: str
    type: str
    description: str
    required: bool
    depth: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class SchemaStats:
    properties: int
    max_depth: int
    required: int
    truncated: bool


class SchemaView:
    """Resolves ``$ref`` (against ``components``) and ``allOf`` so callers see plain objects."""

    def __init__(self, *, components: Mapping[str, Any] | None = None) -> None:
        self._components = components or {}

    def resolve(self, node: Any, *, _hops: int = 0) -> Mapping[str, Any]:
        if not isinstance(node, Mapping) or _hops > 16:
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self._components.get(ref.rsplit("/", 1)[-1], {})
            return {**self.resolve(target, _hops=_hops + 1), **{k: v for k, v in node.items() if k != "$ref"}}
        all_of = node.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged: dict[str, Any] = {}
            for part in all_of:
                merged.update(self.resolve(part, _hops=_hops + 1))
            merged.update({k: v for k, v in node.items() if k != "allOf"})
            return merged
        return node

    def properties(self, node: Any) -> Mapping[str, Any]:
        props = self.resolve(node).get("properties")
        return props if isinstance(props, Mapping) else {}

    def child(self, node: Any, name: str) -> Mapping[str, Any]:
        return self.resolve(self.properties(node).get(name, {}))

    def walk(self, root: Any, *, prefix: str = "", max_depth: int = MAX_WALK_DEPTH) -> Iterator[Field]:
        """Every field under ``root``, breadth first, bounded by depth and a node budget."""
        queue: list[tuple[str, Any, int]] = [(prefix, root, 0)]
        budget = MAX_WALK_NODES
        while queue and budget > 0:
            path, node, depth = queue.pop(0)
            resolved = self.resolve(node)
            listed = resolved.get("required")
            required: list[Any] = listed if isinstance(listed, list) else []
            for name, child in self.properties(resolved).items():
                budget -= 1
                if budget <= 0:
                    return
                child_resolved = self.resolve(child)
                child_path = f"{path}.{name}" if path else name
                yield Field(
                    path=child_path,
                    type=_type_of(child_resolved),
                    description=clean(str(child_resolved.get("description", ""))),
                    required=name in required,
                    depth=depth + 1,
                )
                if depth + 1 < max_depth:
                    queue.append((child_path, child_resolved, depth + 1))
                    items = self.resolve(child_resolved.get("items"))
                    if items:
                        queue.append((child_path + "[]", items, depth + 1))

    def stats(self, root: Any) -> SchemaStats:
        count = required = max_depth = 0
        truncated = False
        for index, field in enumerate(self.walk(root)):
            count += 1
            required += field.required
            max_depth = max(max_depth, field.depth)
            if index >= MAX_WALK_NODES - 2:
                truncated = True
        return SchemaStats(properties=count, max_depth=max_depth, required=required, truncated=truncated)


def _type_of(node: Mapping[str, Any]) -> str:
    kind = node.get("type")
    if isinstance(kind, str):
        if kind == "array" and isinstance(node.get("items"), Mapping):
            inner = node["items"].get("type")
            return f"[]{inner}" if isinstance(inner, str) else "array"
        return kind
    if node.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return "any"
    return "object" if "properties" in node else "any"


def clean(text: str) -> str:
    """Description text without markdown noise, on one line."""
    return _SPACE.sub(" ", _MARKUP.sub(lambda m: m.group(1) or "", text)).strip()


def first_sentences(text: str, *, max_words: int) -> str:
    """Whole sentences from the start of ``text`` up to about ``max_words`` words (at least one, cut)."""
    out: list[str] = []
    used = 0
    for sentence in _SENTENCE.split(clean(text)):
        words = sentence.split()
        if not words:
            continue
        if used and used + len(words) > max_words:
            break
        if used + len(words) > max_words:
            words = words[:max_words]
            sentence = " ".join(words).rstrip(",;:") + " ..."
        out.append(sentence)
        used += len(words)
    return " ".join(out)


def complexity(stats: SchemaStats) -> str:
    """low / medium / high, from the size and shape of the spec schema.

    The rule: score = properties + 20 x (max depth beyond 4) + 5 x required fields.
    low below 40, high at 400 or more (or when the walk hit its node budget), medium between.
    A ConfigMap-like kind is low; a Certificate is medium; a Prometheus or Argo Workflow is high.
    """
    if stats.truncated:
        return "high"
    score = stats.properties + 20 * max(0, stats.max_depth - 4) + 5 * stats.required
    if score < 40:
        return "low"
    return "high" if score >= 400 else "medium"
