"""The write journal: *what* each write changed, for readers that keep something derived from a collection.

A write stamp (stamps.py) tells a reader in another process *that* a collection changed; the journal
tells it *what*, so a keyword index of 100,000 documents is brought up to date by reading the few
records a write touched instead of all of them. Every write through
:class:`~kubevec.backends.base.BaseStore` to a collection adds one entry to :data:`JOURNAL` after its
data and before its stamp: the ids it upserted, the ids it deleted, or that its members changed in a
way the writer cannot list (a delete by filter: a reader compares ids) or that it was created or
dropped (a reader starts over). Whoever has seen an entry therefore sees its data.

Entries carry the writer's wall-clock time. A reader that applied every entry up to ``W`` asks for
those at or after ``W - SLACK`` (writers' clocks and commit order differ by less than that) and skips
the ones it applied already, by id. Writers delete entries older than :data:`RETENTION`, so a reader
that last caught up longer ago than :data:`CATCH_UP_WITHIN` starts over instead of trusting a journal
that may have lost entries.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Sequence
from typing import Final

from kubevec.backends.records import Record

#: The collection of entries; like the stamps, dimension 1 and never embedded.
JOURNAL: Final = "kubevec_journal"
JOURNAL_EMBEDDER: Final = "none"
COLLECTION_FIELD: Final = "collection"
AT_FIELD: Final = "at"
#: How long writers keep entries.
RETENTION: Final = 3600.0
#: A reader whose last catch-up is older than this starts over (RETENTION less a margin for clocks).
CATCH_UP_WITHIN: Final = 2400.0
#: How far back of the newest entry a reader applied it looks again (writers' clocks, commit order).
SLACK: Final = 30.0
#: How often a writer deletes the entries past RETENTION.
TRIM_EVERY: Final = 300.0
#: Ids one entry names at most; a larger write is journaled as several entries.
IDS_PER_ENTRY: Final = 200


@dataclasses.dataclass(frozen=True, kw_only=True)
class Entry:
    """One write: the ids it upserted or deleted; ``members`` when it deleted ids it could not list,
    ``reset`` when the collection was created or dropped."""

    id: str
    collection: str
    at: float
    upserted: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    members: bool = False
    reset: bool = False


def entry_records(
    name: str,
    *,
    upserted: Sequence[str] = (),
    deleted: Sequence[str] = (),
    members: bool = False,
    reset: bool = False,
) -> list[Record]:
    """The journal records of one write to ``name``: one, or one per :data:`IDS_PER_ENTRY` ids it touched
    (a store keeps each record's text in its own indexes: Chroma's server failed to compact a text of
    12,000 ids and refused every write after it)."""
    at = time.time()
    touched = [("upserted", i) for i in upserted] + [("deleted", i) for i in deleted]
    chunks = [touched[start : start + IDS_PER_ENTRY] for start in range(0, len(touched), IDS_PER_ENTRY)] or [[]]
    records = []
    for chunk in chunks:
        entry_id = uuid.uuid4().hex
        body = {
            "upserted": [i for side, i in chunk if side == "upserted"],
            "deleted": [i for side, i in chunk if side == "deleted"],
            "members": members,
            "reset": reset,
        }
        records.append(
            Record(
                id=entry_id,
                vector=[1.0],
                text=json.dumps(body, separators=(",", ":")),
                metadata={COLLECTION_FIELD: name, AT_FIELD: at, "content_hash": entry_id},
            )
        )
    return records


def entry_of(record: Record) -> Entry:
    """An entry read back; a body it cannot read counts as a reset (the reader starts over: never less)."""
    collection = str(record.metadata.get(COLLECTION_FIELD, ""))
    at = float(record.metadata.get(AT_FIELD, 0.0) or 0.0)  # type: ignore[arg-type]
    try:
        body = json.loads(record.text)
        return Entry(
            id=record.id,
            collection=collection,
            at=at,
            upserted=tuple(str(i) for i in body.get("upserted", ())),
            deleted=tuple(str(i) for i in body.get("deleted", ())),
            members=bool(body.get("members", False)),
            reset=bool(body.get("reset", False)),
        )
    except (ValueError, TypeError, AttributeError):
        return Entry(id=record.id, collection=collection, at=at, reset=True)
