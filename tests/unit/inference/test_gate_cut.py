"""Judge first, cut after, in the gate itself (issue 52, build item 1): a string longer than the gate's cut
(:data:`MAX_STRING_CHARS`, 32 KiB) is judged with 32 KiB of what follows the cut, then cut; the cost stays
bounded however long the value (judged on its first :data:`JUDGED_CHARS` only).
"""

from __future__ import annotations

import time

import pytest

from kubevec.inference.bounds import MAX_STRING_CHARS
from kubevec.inference.redaction import redact_text, scrub
from kubevec.inference.redaction.gate import JUDGED_CHARS

SECRET = "Mx7quietHarbor42"
TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def _words(length: int) -> str:
    return ("plain words " * (length // 12 + 2))[:length]


def _runs(secret: str) -> list[str]:
    return [secret[i : i + 6] for i in range(len(secret) - 5)]


def test_a_credential_whose_context_lies_past_the_cut_is_judged_with_it() -> None:
    """A YAML document of 36 KB: the list under ``credentials`` is a credential by its parent key, which
    only the document read as a structure says; cut to 32 KiB first, the quoted note ran past the cut,
    the cut text was no YAML, and the list item was judged as a bare line and kept."""
    doc = f'credentials:\n  - {SECRET}\nnotes: "{_words(36_000)}"\n'
    assert len(doc) > MAX_STRING_CHARS
    kept = redact_text(doc)
    assert SECRET not in kept
    assert "credentials" in kept
    assert "plain words" in kept
    assert len(kept) <= MAX_STRING_CHARS + 8


@pytest.mark.parametrize("start", [32_700, 32_740, 32_760, 32_766])
@pytest.mark.parametrize(
    ("placed", "secret"),
    [
        (TOKEN, TOKEN),
        (f"password={SECRET}", SECRET),
        (f'{{"user": "app", "password": "{SECRET}"}}', SECRET),
        (f"postgres://app:{SECRET}@db.shop.svc:5432/orders", SECRET),
    ],
)
def test_no_part_of_a_secret_that_straddles_the_cut_is_kept(placed: str, secret: str, start: int) -> None:
    value = _words(start - 1) + " " + placed + " " + _words(40_000)
    kept = redact_text(value)
    assert len(kept) <= MAX_STRING_CHARS + 8
    assert not [run for run in _runs(secret) if run in kept]


def test_a_secret_past_the_cut_is_not_kept_and_the_words_before_it_are() -> None:
    value = _words(40_000) + f" password={SECRET} " + _words(1000)
    kept = scrub({"notes": value})["notes"]
    assert SECRET not in kept
    assert kept.startswith("plain words plain words")


def test_what_lies_at_the_end_of_the_judged_part_is_not_kept_when_judging_shrank_it() -> None:
    """A value longer than what is judged, whose first part judging drops (a 60 KB generated run): the
    words at the end of the judged part were read without what follows them, so they are not kept either."""
    blob = "".join(f"{i:x}Zq" for i in range(20_000))[:60_000]
    value = blob + " " + _words(3000) + " zebracrossingmarker " + _words(200_000)
    assert value.index("zebracrossingmarker") < JUDGED_CHARS < len(value)
    kept = redact_text(value)
    assert blob[:20] not in kept
    assert "zebracrossingmarker" not in kept


@pytest.mark.parametrize("size", [1_000_000, 10_000_000])
def test_a_long_value_costs_what_its_judged_part_costs(size: int) -> None:
    line = "The checkout service talks to db-7 at 10.0.0.12:5432, retries=3; see https://docs.example.com/run\n"
    value = (line * (size // len(line) + 1))[:size] + f" password={SECRET}"
    started = time.perf_counter()
    kept = redact_text(value)
    assert time.perf_counter() - started < 2.0
    assert SECRET not in kept
    assert len(kept) <= MAX_STRING_CHARS + 8
