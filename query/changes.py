"""Reading the change history: "what changed?" by time range, filters and meaning (``kubevec changes``,
the MCP tool ``list_changes``).

Answers are a timeline, newest first. A question (``query``) picks the ``k`` changes closest in
meaning within the range (or, when summaries are not embedded, those with all its words), shown newest
first; without one every change in the range matches, ``k`` at a time, with a cursor for the next
page. Each caller sees the changes of the objects it may see: the caller's view of the instances
collection applies to the history unchanged (a record carries the object's cluster, namespace and
resource, the fields views filter on).
"""

from __future__ import annotations

import binascii
import dataclasses
import datetime
import hashlib
import json
import re
import time
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from kubevec.backends import Record, VectorStore
from kubevec.backends.filters import And, Contains, Eq, Filter, Gte, Lt, to_json
from kubevec.core import fields as payload
from kubevec.core.errors import SearchError
from kubevec.inference.providers.embedders.base import Embedder
from kubevec.query.cursor_codec import decode, encode
from kubevec.query.flags import Flag
from kubevec.query.request import MAX_K, SearchRequest, describe

_RELATIVE: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
CHANGE_KINDS: Final = ("created", "updated", "deleted")


def parse_time(value: str, *, now: float | None = None) -> float:
    """``2h``, ``30m``, ``7d`` (that long ago) or an ISO 8601 time (``2026-11-24T09:00:00Z``) as Unix seconds."""
    now = time.time() if now is None else now
    if match := _RELATIVE.match(value):
        return now - float(match.group(1)) * _UNITS[match.group(2)]
    try:
        parsed = datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise SearchError(
            f"Cannot read the time {value!r}: give a duration ago (90s, 30m, 2h, 7d, 1w) or an ISO 8601 time"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed.timestamp()


def _seconds(value: Any) -> Any:
    """``since``/``until`` as Unix seconds: a number as it is, text as :func:`parse_time` reads it, blank as none."""
    if isinstance(value, str):
        return parse_time(value) if value.strip() else None
    return value


#: A point in time: Unix seconds, or what agents and people write (``30m``, ``2h``, ``7d``, ISO 8601).
When = Annotated[float | None, BeforeValidator(_seconds)]


class ChangesRequest(BaseModel):
    """One question to the history; every field narrows it (the MCP tool's and ``kubevec changes``' request)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: Annotated[
        str | None,
        Field(description="Pick changes by meaning (e.g. 'payments image')."),
        Flag(help="pick changes by meaning (optional)", positional=True, optional=True),
    ] = None
    since: Annotated[
        When,
        Field(description="From this long ago (30m, 2h, 7d) or this ISO 8601 time; default: all kept."),
        Flag(help="from this long ago (30m, 2h, 7d) or this ISO 8601 time", text=True),
    ] = None
    until: Annotated[
        When,
        Field(description="Up to this long ago or ISO 8601 time; default: now."),
        Flag(help="up to this long ago or ISO 8601 time (default: now)", text=True),
    ] = None
    namespace: Annotated[
        str | None, Field(description="Only objects in this namespace."), Flag(help="only objects in this namespace")
    ] = None
    kind: Annotated[
        str | None, Field(description="Only this kind, e.g. Deployment."), Flag(help="only this kind, e.g. Deployment")
    ] = None
    name: Annotated[
        str | None, Field(description="Only objects with this name."), Flag(help="only objects with this name")
    ] = None
    change: Annotated[
        Literal["created", "updated", "deleted"] | None,
        Field(description="Only this kind of change."),
        Flag(help="only this kind of change"),
    ] = None
    cluster: Annotated[
        str | None,
        Field(description=SearchRequest.model_fields["cluster"].description),
        Flag(help="only this cluster's objects (several controllers can share a store)"),
    ] = None
    k: Annotated[
        int, Field(description="How many changes (default 20)."), Flag(help=f"how many changes (1-{MAX_K}, default 20)")
    ] = 20
    cursor: Annotated[
        str | None,
        Field(description="The next page of a listing without a query (from the last answer)."),
        Flag(help="the next page of a listing without a query (the cursor the last page printed)"),
    ] = None

    def __init__(self, **fields: Any) -> None:
        """Validated as it is built, every problem one :class:`SearchError` line (as ``ChangesRequest(k=0)`` always was)."""
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise SearchError(describe(exc)) from None

    @model_validator(mode="before")
    @classmethod
    def _known_change(cls, fields: Any) -> Any:
        change = fields.get("change") if isinstance(fields, dict) else None
        if change is not None and change not in CHANGE_KINDS:
            raise ValueError(f"change must be one of {', '.join(CHANGE_KINDS)}, got {change!r}")
        return fields

    @model_validator(mode="after")
    def _coherent(self) -> ChangesRequest:
        if not 1 <= self.k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, got {self.k}")
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ValueError("since must be before until")
        if self.cursor is not None and self.query:
            raise ValueError("A cursor pages a listing without a query; ask the question again with a larger k")
        return self

    def conditions(self) -> Filter | None:
        parts: list[Filter] = [
            Eq(field, value)
            for field, value in (
                ("namespace", self.namespace),
                ("kind", self.kind),
                ("name", self.name),
                ("cluster", self.cluster),
                ("change", self.change),
            )
            if value
        ]
        if self.since is not None:
            parts.append(Gte("time", self.since))
        if self.until is not None:
            parts.append(Lt("time", self.until))
        return And(tuple(parts)) if parts else None


class ChangeEntry(BaseModel):
    """One change as agents get it (also the MCP tool's output schema)."""

    model_config = ConfigDict(frozen=True)

    id: str
    summary: str
    at: str
    time: float
    change: Literal["created", "updated", "deleted"]
    object: str
    kind: str
    namespace: str
    name: str
    cluster: str
    fields: list[str]
    similarity: float | None = None

    @classmethod
    def of(cls, record: Record, *, similarity: float | None = None) -> ChangeEntry:
        meta = record.metadata
        changed = payload.FIELDS.raw(meta, [])
        return cls(
            id=record.id,
            summary=record.text,
            at=payload.AT.of(meta),
            time=float(str(payload.TIME.raw(meta, 0.0))),
            change=_change_of(payload.CHANGE.raw(meta)),
            object=payload.OBJECT.of(meta),
            kind=payload.KIND.of(meta),
            namespace=payload.NAMESPACE.of(meta),
            name=payload.NAME.of(meta),
            cluster=payload.CLUSTER.of(meta),
            fields=[str(f) for f in changed] if isinstance(changed, list) else [],
            similarity=None if similarity is None else round(similarity, 4),
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Changes:
    """A page of the timeline, newest first, with how many matched and the next page's cursor."""

    entries: list[ChangeEntry]
    total: int
    cursor: str | None = None
    degraded: str | None = None

    @property
    def truncated(self) -> bool:
        return self.total > len(self.entries)

    def to_json(self) -> dict[str, Any]:
        out = {
            "changes": [e.to_json() for e in self.entries],
            "total": self.total,
            "truncated": self.truncated,
            "cursor": self.cursor,
        }
        if self.degraded:
            out["degraded"] = self.degraded
        return out

    def lines(self) -> list[str]:
        rows = [f"{e.at}  {e.summary}" + (f"  [{e.cluster}]" if e.cluster else "") for e in self.entries]
        if not rows:
            return ["No changes matched."]
        if self.truncated:
            more = f"; next page: cursor={self.cursor}" if self.cursor else "; raise k or narrow the range"
            rows.append(f"Showing {len(self.entries)} of {self.total}{more}")
        return rows


async def list_changes(
    *,
    store: VectorStore,
    collection: str,
    request: ChangesRequest,
    scope: Filter | None,
    embedder: Embedder | None,
    embedded: bool,
) -> Changes:
    """The changes ``request`` asks for within ``scope`` (the caller's view)."""
    conditions = _all(request.conditions(), scope)
    if request.query:
        if embedded and embedder is not None:
            vector = await embedder.embed_query(request.query)
            hits = await store.search(collection, vector=vector, k=request.k, filter=conditions)
            total = await store.count(collection, conditions)
            entries = [ChangeEntry.of(_record(h.id, h.text, h.metadata), similarity=h.score) for h in hits]
            return Changes(entries=_newest_first(entries), total=total)
        worded = _all(conditions, Contains(request.query))  # every word of the question, newest first
        entries = _newest_first([ChangeEntry.of(r) async for r in store.iter_records(collection, filter=worded)])
        return Changes(entries=entries[: request.k], total=len(entries))
    digest = _digest(collection, request, scope)
    after = _read_cursor(request.cursor, digest=digest) if request.cursor else None
    stamped = sorted(
        [
            ((-ChangeEntry.of(r).time, r.id), r)
            async for r in store.iter_records(collection, filter=conditions, page_size=1000)
        ],
        key=lambda pair: pair[0],
    )
    if after is not None:
        stamped = [pair for pair in stamped if pair[0] > after]
    total = len(stamped) if after is None else await store.count(collection, conditions)
    page = stamped[: request.k]
    cursor = _make_cursor(page[-1][0], digest=digest) if len(stamped) > request.k else None
    return Changes(entries=[ChangeEntry.of(r) for _, r in page], total=total, cursor=cursor)


def _change_of(value: object) -> Literal["created", "updated", "deleted"]:
    if value == "created":
        return "created"
    return "deleted" if value == "deleted" else "updated"


def _all(left: Filter | None, right: Filter | None) -> Filter | None:
    parts = [f for f in (left, right) if f is not None]
    if not parts:
        return None
    flat: list[Filter] = []
    for part in parts:
        flat.extend(part.filters if isinstance(part, And) else (part,))
    return And(tuple(flat))


def _record(id: str, text: str, metadata: Any) -> Record:
    return Record(id=id, vector=[], text=text, metadata=metadata)


def _newest_first(entries: list[ChangeEntry]) -> list[ChangeEntry]:
    return sorted(entries, key=lambda e: (-e.time, e.id))


def _digest(collection: str, request: ChangesRequest, scope: Filter | None) -> str:
    """What a cursor is bound to: the listing's filters and view, not its time range (``since 2h`` moves)."""
    unbounded = request.model_copy(update={"since": None, "until": None, "cursor": None, "k": 1})
    conditions = _all(unbounded.conditions(), scope)
    body = json.dumps([collection, to_json(conditions) if conditions is not None else None], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _make_cursor(position: tuple[float, str], *, digest: str) -> str:
    return encode(json.dumps({"before": [position[0], position[1]], "of": digest}, separators=(",", ":")))


def _read_cursor(cursor: str, *, digest: str) -> tuple[float, str]:
    try:
        raw = decode(cursor)
        position = (float(raw["before"][0]), str(raw["before"][1]))
        of = str(raw["of"])
    except (ValueError, KeyError, TypeError, IndexError, binascii.Error, RecursionError):
        raise SearchError("The cursor is not one list_changes gave; start again without it") from None
    if of != digest:
        raise SearchError("The cursor belongs to another listing (other filters or range); start again without it")
    return position
