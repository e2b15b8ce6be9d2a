"""English word stems, so a question's "cache" meets a description's "caching" and "databases" meets "database".

tantivy's Snowball stemmer (the keyword index's library, already loaded by every reader) behind a cache:
questions and catalogue lines repeat the same few hundred words.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

_WORD: Final = re.compile(r"[a-z][a-z0-9]+")


@functools.cache
def _analyzer() -> Any:
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


@functools.cache
def stem(word: str) -> str:
    """``caching`` -> ``cach``; a stop word -> ``""``."""
    found = _analyzer().analyze(word.lower())
    return str(found[0]) if found else ""


def stems(text: str) -> frozenset[str]:
    """The stems of ``text``'s words (two letters or more, stop words left out)."""
    return frozenset(s for word in _WORD.findall(text.lower()) if (s := stem(word)))
