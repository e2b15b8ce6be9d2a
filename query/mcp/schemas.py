"""What each MCP tool answers, typed: the SDK publishes these as the tools' output schemas."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from kubevec.query.changes import ChangeEntry


class SearchHit(BaseModel):
    """One result: ``score`` orders the list (``score_kind`` says what it is), ``similarity`` is to the query."""

    id: str
    score: float
    score_kind: str
    similarity: float | None
    label: str
    metadata: dict[str, Any]
    text: str


class SearchResults(BaseModel):
    results: list[SearchHit]
    #: Why these are not what was asked for (the embedder is down: keywords alone); absent when they are.
    degraded: str | None = None
    #: What matched and the caller may see (exact for filters and keywords; candidates ranked for a question).
    total: int | None = None
    #: More matched than shown.
    truncated: bool = False
    #: Pass it back as ``cursor`` for the next page of a filter-only listing.
    cursor: str | None = None
    #: count_by: matches per value (no results then).
    counts: dict[str, int] | None = None


class StoredDocument(BaseModel):
    id: str
    collection: str
    metadata: dict[str, Any]
    text: str


class KindInfo(BaseModel):
    kind: str | None
    group: str
    apiVersion: str | None
    resource: str
    scope: str | None
    servedVersions: list[str]
    storageVersion: str | None
    shortNames: list[str]
    topFields: list[str]
    id: str
    match: Literal["exact", "semantic"]
    similarity: float | None = None
    cluster: str | list[str] | None = None


class ResolvedKinds(BaseModel):
    kinds: list[KindInfo]


class ChangeList(BaseModel):
    changes: list[ChangeEntry]
    total: int
    truncated: bool
    cursor: str | None = None
    degraded: str | None = None


class RelatedObject(BaseModel):
    key: str
    id: str | None
    kind: str
    namespace: str | None
    name: str
    cluster: str | None
    stored: bool
    health: str | None = None
    ready: bool | None = None
    phase: str | None = None


class Relation(BaseModel):
    hop: int
    direction: Literal["out", "in"]
    relation: str
    #: definite: a field Kubernetes defines (owner, pod spec, built-in reference) or a matching selector;
    #: inferred: a custom resource's field named like a reference (issuerRef, secretName).
    evidence: Literal["definite", "inferred"]
    via: str | None = None  # a calls edge: the env variable(s) or args naming the Service
    from_: RelatedObject = Field(alias="from")
    to: RelatedObject


class RelatedObjects(BaseModel):
    subject: RelatedObject
    hops: int
    direction: Literal["out", "in", "both"]
    edges: list[Relation]
    truncated: bool


class FacetCounts(BaseModel):
    field: str
    counts: dict[str, int]
