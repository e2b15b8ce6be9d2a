"""Paging in id order for stores whose own paging is by offset (Chroma) or has none (Lance).

Chroma's ``get(offset=...)`` rescans the rows before the offset on every page, so reading a
collection costs the square of its size: 100,000 instance texts in pages of 1,000 are 100 pages
that skip 5 million rows between them. Here a scan lists the matching ids once (ids alone are
small: one call), and each page reads its records by id. A cursor is the last id returned, so a
page that starts after a record was deleted or added since the listing neither repeats nor skips
what the listing held; the listing is kept for the pages that follow it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Final

from kubevec.backends.filters import Filter
from kubevec.core.bounded import LRU

#: Scans whose listings are kept at once (a scan reads its pages one after another; few run together).
_LISTINGS: Final = 4


class IdOrder:
    """Pages of ids in order over a listing taken when a scan starts; ``ids_of(name, filter)`` lists them."""

    def __init__(self, ids_of: Callable[[str, Filter | None], list[str]]) -> None:
        self._ids_of = ids_of
        self._listed: LRU[tuple[str, str], list[str]] = LRU(_LISTINGS)

    def page(
        self, name: str, filter: Filter | None, cursor: str | int | None, limit: int
    ) -> tuple[list[str], str | None]:
        """The ids of one page, and the cursor of the next (None: this was the last)."""
        key = (name, repr(filter))
        ids = self._listed.get(key)
        if cursor is None or ids is None:  # a new scan, or one whose listing was let go: list (again)
            ids = sorted(self._ids_of(name, filter))
            self._listed[key] = ids
        start = 0 if cursor is None else bisect.bisect_right(ids, str(cursor))
        page = ids[start : start + limit]
        if start + limit >= len(ids):
            self._listed.pop(key, None)  # the scan is done
            return page, None
        return page, page[-1]

    def forget(self) -> None:
        """Drop every listing (the store was written or reopened: a new scan lists again anyway)."""
        self._listed.clear()
