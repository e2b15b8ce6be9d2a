"""One search request, as agents and people write it: the MCP tool's input schema and the CLI's arguments.

:class:`SearchRequest` is the only place a search is spelled out: its fields (with their bounds
and descriptions) become the parameters of the MCP ``vector_search`` tool, the CLI builds one from
its flags, and :meth:`kubevec.query.search.SearchService.search` takes one. So there is one cap on ``k``
and one wording of every error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from kubevec.backends.filters import And, Eq, Filter, all_of, from_json
from kubevec.core import fields as payload_fields
from kubevec.core.errors import InvalidFilter, SearchError
from kubevec.inference.collections import Collection

#: The most results one search returns; also the most MCP and the CLI accept.
MAX_K: Final = 100
#: The candidates of an instance search read by their names (``names``): the same for every ``k`` up to it.
NAMED_POOL: Final = 100
#: The largest candidate pool for fusion and MMR.
MAX_FETCH_K: Final = 4 * MAX_K
MAX_CONDITIONS: Final = 64
#: Fields an answer can be counted by (``count_by``): the countable fields of the payload registry.
if TYPE_CHECKING:
    CountField = str
else:
    CountField = Literal[payload_fields.countable()]


#: The longest cursor any kubevec answer gives is a few hundred characters; longer ones are not ours.
MAX_CURSOR: Final = 4096
#: The longest cluster name asked about (kubevec's own are at most 63 characters).
MAX_CLUSTER_CHARS: Final = 253


def check_cluster(cluster: str | None) -> None:
    """A ``cluster`` argument no store can hold is one clear error (it was a traceback past 1,024 characters)."""
    if cluster is not None and len(cluster) > MAX_CLUSTER_CHARS:
        raise SearchError(f"cluster: at most {MAX_CLUSTER_CHARS} characters (kubevec's cluster names are at most 63)")


class SearchRequest(BaseModel):
    """What to search for, where, and how many; immutable once built (see :meth:`build`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    collection: Annotated[
        Collection,
        Field(
            description="capabilities: one document per resource TYPE (which CRD or kind does X?). "
            "instances: one document per live OBJECT (what runs X, where, with which labels?)."
        ),
    ] = "capabilities"
    query: Annotated[str | None, Field(description="A natural-language question; embedded once.")] = None
    keyword: Annotated[
        str | None,
        Field(
            description="Exact words. Alone: keyword search without embedding. With a query: results must contain every word."
        ),
    ] = None
    filter: Annotated[
        dict[str, Any] | None,
        Field(
            description='Metadata filter JSON, e.g. {"kind": "Deployment", "namespace": {"$in": ["prod", "staging"]}, '
            '"replicas": {"$gt": 1}} or {"op": "eq", "field": "kind", "value": "Service"}. '
            "Operators: $eq $ne $in $nin $gt $gte $lt $lte, $and/$or lists, $contains (words in the text)."
        ),
    ] = None
    kind: Annotated[str | None, Field(description="Only this Kind, e.g. Deployment or Certificate.")] = None
    group: Annotated[
        str | None, Field(description="Only this API group, e.g. apps or cert-manager.io ('core' for v1).")
    ] = None
    namespace: Annotated[str | None, Field(description="Only this namespace (instances).")] = None
    health: Annotated[
        Literal["healthy", "progressing", "degraded", "unknown"] | None,
        Field(description="Only objects whose status summary is this (instances), e.g. degraded workloads."),
    ] = None
    cluster: Annotated[
        str | None,
        Field(
            max_length=MAX_CLUSTER_CHARS,
            description="Only this cluster's documents (several controllers can write one store); default: all.",
        ),
    ] = None
    labels: Annotated[tuple[str, ...], Field(description="Labels as k=v; all must match (instances).")] = ()
    k: Annotated[int, Field(ge=1, le=MAX_K, description="How many results.")] = 5
    hybrid: Annotated[bool, Field(description="Fuse the meaning ranking with a BM25 word ranking.")] = True
    mmr: Annotated[bool, Field(description="Diversify results (avoid near-duplicates).")] = False
    names: Annotated[
        bool,
        Field(
            description="Instances: rank first what the question names (object names, namespaces, kinds, images) "
            "and, for a question about trouble, what is degraded."
        ),
    ] = True
    rerank: Annotated[
        bool, Field(description="Reorder the top candidates with the configured reranker, if any (not with mmr).")
    ] = True
    mmr_lambda: Annotated[float, Field(ge=0, le=1, description="MMR: 1 = relevance only, 0 = diversity only.")] = 0.5
    fetch_k: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_FETCH_K,
            description="Candidates for fusion and MMR (default 4*k; instances read by names: 100, for every k).",
        ),
    ] = None
    min_score: Annotated[float | None, Field(ge=0, le=1, description="Drop results below this similarity.")] = None
    cursor: Annotated[
        str | None,
        Field(
            max_length=MAX_CURSOR,
            description="The cursor of a previous answer to a filter-only or keyword search: its next page (same "
            "filters and keyword). Pages hold every matching document once, also while the cluster changes.",
        ),
    ] = None
    count_by: Annotated[
        CountField | None,
        Field(
            description="Count the filter or keyword matches grouped by this field instead of returning documents, "
            "e.g. degraded Deployments per namespace."
        ),
    ] = None

    _conditions: Filter | None = PrivateAttr(default=None)

    @classmethod
    def build(cls, **fields: Any) -> SearchRequest:
        """Validate ``fields`` into a request; every problem in one :class:`SearchError` line."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise SearchError(describe(exc)) from None

    @field_validator("query", "keyword", "kind", "group", "namespace", "cluster")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return (value or "").strip() or None

    @field_validator("labels")
    @classmethod
    def _labels_are_pairs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for label in value:
            if "=" not in label:
                raise ValueError(f"Labels are key=value, got {label!r}")
        return value

    @model_validator(mode="after")
    def _conditions_parse(self) -> SearchRequest:
        parts: list[Filter | None] = []
        if self.filter is not None:
            try:
                parts.append(from_json(self.filter))
            except InvalidFilter as exc:
                raise ValueError(f"Invalid filter: {exc}") from None
        parts += [Eq(field, value) for field, value in self._equalities() if value]
        parts += [Eq("labels", label) for label in self.labels]
        combined = all_of(*parts)
        if isinstance(combined, And) and len(combined.filters) > MAX_CONDITIONS:
            raise ValueError(f"Too many conditions (at most {MAX_CONDITIONS})")
        if self.query is None and self.keyword is None and combined is None:
            raise ValueError(
                "Give a query, a keyword or a filter (kind, group, namespace, health, cluster, labels or filter)"
            )
        if self.cursor is not None and self.query is not None:
            raise ValueError(
                "A cursor pages a filter-only or keyword listing; a question's answer is ranked: raise k instead"
            )
        if self.count_by is not None and self.query is not None:
            raise ValueError("count_by counts filter and keyword matches; drop the query (or use keyword)")
        self._conditions = combined
        return self

    def _equalities(self) -> tuple[tuple[str, str | None], ...]:
        return (
            ("kind", self.kind),
            ("group", self.group),
            ("namespace", self.namespace),
            ("cluster", self.cluster),
            ("health", self.health),
        )

    @property
    def conditions(self) -> Filter | None:
        """The filter, kind, group, namespace and labels as one portable filter (None: no condition)."""
        return self._conditions

    @property
    def pool(self) -> int:
        """How many candidates to rank before cutting to ``k``: for instances read by their names, a fixed
        :data:`NAMED_POOL` (at least ``k``), so that the top ``k`` never depends on ``k``."""
        if self.collection == "instances" and self.names and not self.mmr:
            return max(self.fetch_k or NAMED_POOL, self.k)
        return max(self.fetch_k or 4 * self.k, self.k) if (self.mmr or self.hybrid) else self.k


def describe(exc: ValidationError) -> str:
    """``field: message`` for each error, on one line, without pydantic's URLs and input echoes."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        message = str(error["msg"]).removeprefix("Value error, ")
        where = ".".join(str(part) for part in error["loc"])
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)
