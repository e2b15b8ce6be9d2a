"""Shorthand in a question is spelt out beside itself for the embedder and the word ranking."""

from __future__ import annotations

import pytest

from kubevec.query.request import SearchRequest
from kubevec.query.spelling import spell_out
from tests.doubles.searching import Document, searching


@pytest.mark.parametrize(
    ("question", "spelt"),
    [
        ("LB for gceme", "LB (load balancer) for gceme"),
        ("msyql-router mem lim", "msyql-router mem (memory) lim (limit)"),
        ("catalog db pw", "catalog db (database) pw (password)"),
        ("which load balancer fronts the shop", "which load balancer fronts the shop"),
        ("the lbs of the climb", "the lbs of the climb"),  # whole words only
    ],
)
def test_shorthand_is_spelt_out_beside_itself(question: str, spelt: str) -> None:
    assert spell_out(question) == spelt


async def test_a_question_in_shorthand_meets_the_words_documents_use() -> None:
    """ "LB for the shop": the embedder is asked the question spelt out, and the word ranking (all there is
    while the embedder is down) finds the Service whose document says "load balancer"."""
    docs: list[Document] = [
        ("Service/shop/front", "Service front | namespace: shop | type: LoadBalancer (an external load balancer)",
         {"kind": "Service", "name": "front", "namespace": "shop"}),
        *((f"Service/shop/filler-{i}", f"Service filler-{i} | namespace: shop | type: ClusterIP",
           {"kind": "Service", "name": f"filler-{i}", "namespace": "shop"}) for i in range(200)),
    ]  # fmt: skip
    service, embedder = await searching(docs)
    await service.search(SearchRequest(collection="instances", query="LB for the shop", k=5))
    assert embedder.queries[-1] == "LB (load balancer) for the shop"
    embedder.failing = True
    answer = await service.search(SearchRequest(collection="instances", query="LB for the shop", k=5))
    assert answer.degraded
    assert answer[0].metadata["name"] == "front"
