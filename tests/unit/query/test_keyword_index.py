"""The keyword index scores BM25 with k1 = 1.5 (bm25s's, which the hybrid ranking was built with), not tantivy's 1.2."""

from __future__ import annotations

import math
import re
import threading
from typing import Any

import pytest

from kubevec.query.keyword_index import K1, B, KeywordIndex, State

STOPWORDS = {"the", "a", "of", "and", "to", "in", "is", "it"}
CORPUS = {
    # one word said twice in a short text, against both words once in a longer one: k1 decides
    "many": "alpha alpha",
    "both": "alpha beta noise noise noise",
    "one": "beta other words",
    "tie-b": "omega psi chi",
    "tie-a": "omega psi chi",
}


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"\b\w\w+\b", text.lower()) if w not in STOPWORDS]


def bm25(query: str, *, k1: float) -> dict[str, float]:
    """BM25 as bm25s computes it (Lucene's idf, exact lengths, a word asked twice counted twice)."""
    docs = {i: words(t) for i, t in CORPUS.items()}
    average = sum(map(len, docs.values())) / len(docs)
    out = {}
    for i, doc in docs.items():
        score = 0.0
        for word in words(query):
            freq = doc.count(word)
            df = sum(word in d for d in docs.values())
            if freq:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * (k1 + 1) * freq / (freq + k1 * (1 - B + B * len(doc) / average))
        if score:
            out[i] = score
    return out


def index() -> KeywordIndex:
    built = KeywordIndex.open(path=None)
    built.rewrite(CORPUS.items(), state=State(stamp="s"))
    return built


def order(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda i: (-scores[i], i))


def test_scores_are_bm25_with_bm25s_saturation() -> None:
    query = "alpha beta"
    assert order(bm25(query, k1=1.2)) != order(bm25(query, k1=K1))  # the corpus tells the two apart
    for asked in (query, "beta alpha beta"):  # a word asked twice counts twice
        found = index().search(asked, k=10)
        expected = bm25(asked, k1=K1)
        assert [i for i, _ in found] == order(expected)
        for i, score in found:
            assert math.isclose(score, expected[i], rel_tol=1e-3), (i, score, expected[i])


def test_equal_scores_come_in_the_order_of_their_ids() -> None:
    """However the index is segmented (a fresh build, or one updated in place), ties come out the same."""
    built = index()
    built.apply(upserted=[("tie-b", CORPUS["tie-b"])], removed=[], state=State(stamp="t"))  # now in a later segment
    assert [i for i, _ in built.search("omega", k=10)] == ["tie-a", "tie-b"]


def test_a_build_abandoned_while_a_page_is_added_rolls_back_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that stops cancels its build mid-page: the rollback waits for the page, never runs beside it."""
    built = index()
    rewriting = built.rewriting()
    inside, release = threading.Event(), threading.Event()
    real = built.document

    def slow(document_id: str, text: str) -> Any:
        inside.set()
        release.wait(5)
        return real(document_id, text)

    monkeypatch.setattr(built, "document", slow)
    adding = threading.Thread(target=rewriting.add, args=([("new", "zebra")],))
    adding.start()
    assert inside.wait(5)
    abandoning = threading.Thread(target=rewriting.abandon, args=(RuntimeError("cancelled"),))
    abandoning.start()
    abandoning.join(0.3)
    assert abandoning.is_alive()  # waits for the page
    release.set()
    adding.join(5)
    abandoning.join(5)
    assert not abandoning.is_alive()
    rewriting.add([("later", "zebra")])  # after the rollback: nothing, no error
    built.reread()
    assert sorted(i for i, _ in built.search("omega", k=10)) == ["tie-a", "tie-b"]  # as it was
    assert built.search("zebra", k=10) == []
