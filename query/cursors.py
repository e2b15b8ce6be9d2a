"""Cursors of paged listings: opaque to callers, bound to the question they page (collection and filter)."""

from __future__ import annotations

import hashlib
import json

from kubevec.backends.filters import Contains, Filter, Or, to_json, words
from kubevec.core.errors import SearchError
from kubevec.query.cursor_codec import decode, encode


def any_word(keyword: str | None) -> Filter | None:
    """Documents holding any word of ``keyword``: what keyword search ranks, so what its total counts."""
    found = [Contains(word) for word in dict.fromkeys(words(keyword or ""))]
    return Or(tuple(found)) if len(found) > 1 else (found[0] if found else None)


def _question_of(*, name: str, filter: Filter | None) -> str:
    return hashlib.sha256(json.dumps([name, to_json(filter) if filter else None], sort_keys=True).encode()).hexdigest()[
        :16
    ]


def make_cursor(after: str, *, name: str, filter: Filter | None) -> str:
    """Opaque to callers: the last id shown, bound to the question it pages."""
    return encode(json.dumps({"after": after, "of": _question_of(name=name, filter=filter)}))


def read_cursor(cursor: str, *, name: str, filter: Filter | None) -> str:
    try:
        raw = decode(cursor)
        after, of = raw["after"], raw["of"]
    except (ValueError, TypeError, KeyError, RecursionError):
        raise SearchError("cursor: not one kubevec gave; pass back the cursor of the previous answer") from None
    if not isinstance(after, str) or of != _question_of(name=name, filter=filter):
        raise SearchError("cursor: it pages another search (other collection or filters); ask again without it")
    return after
