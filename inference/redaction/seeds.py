"""Wallet seed phrases: twelve words or more in a row, every one of them from the BIP-39 word list.

A seed phrase (a "recovery phrase", a "mnemonic") is the whole key of a wallet, written as 12, 15, 18, 21
or 24 words of a public list of 2,048 (:mod:`.seed_words`). Prose keeps words by nature, and a cue is
easy to leave out ("canyon afraid burden ..." alone in an annotation), so the words themselves are the
signal: a run of :data:`MIN_SEED_WORDS` or more list words with only spaces or commas between them is
dropped whole, whatever stands around it. Ordinary sentences do not make such runs: the list has no
"the", "and", "for", "with", "is" or "of", and 12 list words in a row do not occur in the bench's
documents nor in the shared corpus's 7,409 CRD descriptions. The checksum a real phrase carries is not
required: a phrase typed wrong, or cut, is still most of a key; its words must be nearly all different,
as words drawn at random are.
"""

from __future__ import annotations

import re
import string
from typing import Final

from kubevec.inference.redaction.seed_words import WORD_SET
from kubevec.inference.redaction.vocabulary import REDACTED

#: The shortest seed phrase BIP-39 defines.
MIN_SEED_WORDS: Final = 12
#: A run of at least :data:`MIN_SEED_WORDS` words as the list spells them (3 to 8 letters), one space or
#: comma apart; only such runs are looked at word by word.
_RUN: Final = re.compile(
    rf"(?<![\w'-])[A-Za-z]{{3,8}}(?:(?:[ \t]*,)?[ \t\n]+[A-Za-z]{{3,8}}){{{MIN_SEED_WORDS - 1},}}(?![\w'-])"
)
_WORD: Final = re.compile(r"[A-Za-z]{3,8}")


def redact_seed_phrases(value: str) -> str:
    """``value`` with every run of :data:`MIN_SEED_WORDS` or more seed-list words in a row replaced."""
    if len(value) < MIN_SEED_WORDS * 4 - 1 or not _may_hold_phrase(value):
        return value
    return _RUN.sub(_judge_run, value)


#: Signs read as spaces by the first look (:func:`_may_hold_phrase`).
_SIGNS: Final = str.maketrans(dict.fromkeys(string.punctuation, " "))
_STREAK: Final = b"\x01" * MIN_SEED_WORDS


def _may_hold_phrase(value: str) -> bool:
    """Whether :data:`MIN_SEED_WORDS` list words stand in a row once signs are read as spaces: a first look done
    in C (split, a set's lookups, a bytes search), since the run pattern tries every word of a long prose."""
    return _STREAK in bytes(map(WORD_SET.__contains__, value.lower().translate(_SIGNS).split()))


def _judge_run(match: re.Match[str]) -> str:
    run = match.group(0)
    words = list(_WORD.finditer(run))
    out: list[str] = []
    at = 0
    start = 0
    while start < len(words):
        end = start
        while end < len(words) and words[end].group(0).lower() in WORD_SET:
            end += 1
        if end - start >= MIN_SEED_WORDS and _drawn_at_random(words[start:end]):
            out.append(run[at : words[start].start()])
            out.append(REDACTED)
            at = words[end - 1].end()
        start = end + 1
    if not out:
        return run
    out.append(run[at:])
    return "".join(out)


def _drawn_at_random(words: list[re.Match[str]]) -> bool:
    """Words drawn at random from 2,048 are nearly all different (a repeat in 12 words has a chance of 3%):
    filler repeated (``word word word ...``) is no phrase."""
    return 5 * len({word.group(0).lower() for word in words}) >= 4 * len(words)
