"""Write stamps: one small read tells a reader in another process whether a collection changed.

Every write through :class:`~kubevec.backends.base.BaseStore` (upsert, delete, delete by filter,
create, drop) ends by giving the collection a new random stamp, one record per collection in the
store's own small :data:`STAMPS` collection (dimension 1, like the generation pointer). Written
*after* the data, so a reader that sees a stamp and then reads the data sees at least what that
stamp stands for.

Readers compare stamps instead of guessing from files or clocks: a following store (``kubevec mcp``
or the resident CLI reader beside the controller) reopens only when a writer wrote, and a lexical
index is rebuilt (or loaded from the saved one built at the same stamp) exactly when its
collection changed, never on a timer. A store no kubevec of this version has written yet has no
stamps; its readers fall back to their older checks.
"""

from __future__ import annotations

import uuid
from typing import Final

from kubevec.backends.records import Record

#: The collection of stamps: one record per collection, id = the collection's (physical) name.
STAMPS: Final = "kubevec_stamps"
STAMP_FIELD: Final = "stamp"
STAMPS_EMBEDDER: Final = "none"


def new_stamp(name: str) -> Record:
    """The record that gives ``name`` a stamp no earlier write had."""
    stamp = uuid.uuid4().hex
    return Record(
        id=name,
        vector=[1.0],
        text=f"write stamp of {name}",
        metadata={STAMP_FIELD: stamp, "content_hash": stamp},
    )


def stamps_of(records: list[Record]) -> dict[str, str]:
    """Collection name -> stamp, from the records of :data:`STAMPS`."""
    return {record.id: str(record.metadata.get(STAMP_FIELD, "")) for record in records}
