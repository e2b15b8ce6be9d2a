"""How a question's words meet a name part that is not one of them: by its stem, by the verb an agent
noun is made of, and inside a part that runs two words together.

Names are made of words the way code is, not the way questions are: ``opentelemetry-collector`` is
what "where are traces collected" asks for, ``ratelimit`` is "the rate limiter", ``subtractapp`` is
"which workload subtracts". A question's words name a part of a name (:mod:`kubevec.query.intent`)
when they are that part; here they also meet it when

- the part and a question word share a stem (``orders`` / "ordering"), the part is an agent noun
  whose verb the question says (``collector`` / "collected", ``adder`` / "add"), or the question says
  the action noun of the part's verb (``add`` / "addition", ``divide`` / "division");
- the part runs words together and the question says some of them: all said, the part is heard
  whole (``ratelimit`` / "rate limiter", ``productcatalogservice`` / "the product catalog service"); some
  said and the others plain English words (the model's own vocabulary), it is half heard
  (``subtractapp`` / "subtracts": ``app`` is left unsaid; ``customermanagementapi`` / "manages customers").
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable
from typing import Final

from kubevec.query.stems import stem
from kubevec.query.typos import dictionary

#: The shortest word read inside a run-together part or as an agent noun's verb ("add", "run").
SHORTEST: Final = 3


@functools.cache
def forms(word: str) -> frozenset[str]:
    """``word``, its stem and, for an agent noun, the verb it is made of: ``collector`` -> ``collect``,
    ``limiter`` -> ``limit``, ``adder`` -> ``add``, ``runner`` -> ``run`` (each with its stem); for an action
    noun, its verb: ``addition`` -> ``add``, ``division`` -> ``divide``."""
    found = {word, stem(word)}
    found.update(root for root in _action_verbs(word))
    if len(word) > 4 and word.endswith(("er", "or")):
        root = word[:-2]
        found.update((root, stem(root)))
        if len(root) > SHORTEST and root[-1] == root[-2]:
            found.add(root[:-1])  # a doubled consonant: runner, adder
    return frozenset(f for f in found if len(f) >= SHORTEST)


#: How an action noun ends, and what its verb ends in instead (``addition`` -> ``add``, ``division`` ->
#: ``divide``, ``multiplication`` -> ``multiply``, ``subtraction`` -> ``subtract``, ``creation`` -> ``create``).
_ACTION_ENDINGS: Final = (
    ("ication", ("y",)),
    ("ition", ("",)),
    ("ision", ("ide",)),
    ("ation", ("", "e", "ate")),
    ("ction", ("ct",)),
    ("ption", ("pt",)),
    ("ssion", ("ss",)),
)


def _action_verbs(word: str) -> list[str]:
    """The verbs an action noun may be made of ("which service performs addition": ``addapp``)."""
    for ending, verbs in _ACTION_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= SHORTEST - 1:
            root = word[: -len(ending)]
            # a bare root only when it is a word's length on its own (transformation: transform; not creation: cre)
            return [
                root + verb
                for verb in verbs
                if len(root + verb) >= SHORTEST and (verb or ending == "ition" or len(root) > 4)
            ]
    return []


@dataclasses.dataclass(frozen=True)
class Heard:
    """What a question's words say, in every form a name part may meet them in."""

    said: frozenset[str]

    @classmethod
    def of(cls, words: Iterable[str]) -> Heard:
        """``words`` as said: a hyphenated one ("rate-limiter") word by word."""
        parts = {part for word in words for part in re.split(r"[^a-z0-9]+", word.lower()) if part}
        return cls(frozenset(f for part in parts for f in forms(part)))

    def part(self, part: str) -> float:
        """1 when the question says ``part`` in some form, 1 or 0.5 when it says the words the part runs
        together (both or one, the other a plain word), else 0."""
        if not self.said.isdisjoint(forms(part)):
            return 1.0
        english = dictionary()
        if len(part) < 2 * SHORTEST or part in english:
            return 0.0
        heard, words = self._run_together(part)
        return 0.0 if not heard else 1.0 if heard == words else 0.5

    def _run_together(self, part: str) -> tuple[int, int]:
        """The words ``part`` runs together, read the way that hears most of them (and has fewest words):
        how many the question says, and how many there are (``productcatalogservice``: product, catalog,
        service). Each word is one the question says or a plain English word; (0, 0) when no reading is."""
        english = dictionary()
        # best[i]: (heard, -words) of the best reading of part[:i], None when it cannot be read
        best: list[tuple[int, int] | None] = [(0, 0)] + [None] * len(part)
        for end in range(SHORTEST, len(part) + 1):
            for start in range(0, end - SHORTEST + 1):
                before = best[start]
                word = part[start:end]
                if before is None or word == part:
                    continue
                said = self._word(word)
                if not said and word not in english:
                    continue
                reading = (before[0] + said, before[1] - 1)
                if best[end] is None or reading > best[end]:  # type: ignore[operator]
                    best[end] = reading
        found = best[len(part)]
        return (found[0], -found[1]) if found is not None else (0, 0)

    def _word(self, word: str) -> bool:
        return not self.said.isdisjoint(forms(word))
