"""Misspelt names read as the names they miss: "catalg servcie port" asks for the catalog Service.

People type questions fast, and a name spelt one letter wrong matches no name, no kind and no word of
any document, so neither ranking nor the names the question says can find its object. A question word
is read as a name it misses when:

- it is no English word: not a whole word of the embedding model's vocabulary (30,000 word pieces,
  shipped with the package), so "these" is never "theme" and "stored" never "store";
- it is one edit from exactly one name part, kind word or namespace the candidates have (an insertion,
  a deletion, a substitution or two letters swapped; two edits from nine letters on); and
- it has five letters or more (short words have too many neighbours), or four when it is a name of five
  with a letter dropped and no other name is ("ordr crashloop": ``order``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Final

from kubevec.inference.tokens import load_tokenizer

MIN_LETTERS: Final = 5
#: From this length a word may be two edits from the name it misses.
LONG_WORD: Final = 9


@functools.cache
def dictionary() -> frozenset[str]:
    """The embedding model's whole words (word pieces that begin a word, letters only)."""
    vocabulary: Mapping[str, int] = load_tokenizer().get_vocab()
    return frozenset(piece for piece in vocabulary if piece.isalpha() and piece.isascii())


def distance(a: str, b: str, *, limit: int) -> int:
    """Optimal string alignment distance (edits, a swap of two neighbours counting one); ``limit + 1``
    as soon as it is certain to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        row = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], previous2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        previous2, previous = previous, row
    return previous[-1]


def corrections(words: Iterable[str], *, known: Iterable[str]) -> dict[str, str]:
    """``{misspelt word: the one known name it misses}`` for the words read as misspellings."""
    names = frozenset(k for k in known if len(k) >= MIN_LETTERS - 1 and k.isalpha())
    english = dictionary()
    out: dict[str, str] = {}
    for word in dict.fromkeys(words):
        if not word.isalpha() or word in english or word in names:
            continue
        if len(word) == MIN_LETTERS - 1:  # a short word: only a letter dropped, from one name alone ("ordr")
            dropped = [name for name in names if len(name) == MIN_LETTERS and distance(word, name, limit=1) == 1]
            if len(dropped) == 1:
                out[word] = dropped[0]
            continue
        if len(word) < MIN_LETTERS:
            continue
        if word.endswith("s") and (word[:-1] in names or (word.endswith("es") and word[:-2] in names)):
            continue  # a known name in the plural ("namespaces", "statefulsets"), not a misspelling of it
        limit = 2 if len(word) >= LONG_WORD else 1
        near = sorted((d, name) for name in names if (d := distance(word, name, limit=limit)) <= limit)
        if near and (len(near) == 1 or near[0][0] < near[1][0]):
            out[word] = near[0][1]
    return out


def as_cased(fixed: str | None, word: str) -> str:
    """``word``'s correction (if any), capitalised as ``word`` was: "Servcie" is "Service", the kind."""
    if fixed is None:
        return word
    return fixed[:1].upper() + fixed[1:] if word[:1].isupper() else fixed
