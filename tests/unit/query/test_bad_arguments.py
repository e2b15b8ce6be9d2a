"""Every bad argument an agent can send is one clear SearchError, never a traceback."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kubevec.backends.memory import MemoryStore
from kubevec.core.errors import SearchError
from kubevec.query.changes import ChangesRequest
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService


def encoded(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


async def service() -> SearchService:
    store = MemoryStore()
    for name in ("instances", "capabilities", "changes"):
        await store.ensure_collection(name, dimension=8, embedder="x")
    return SearchService(
        store=store,
        embedder=None,
        collections={"instances": "instances", "capabilities": "capabilities", "changes": "changes"},
    )


LONG = "c" * 2000
CALLS: dict[str, Callable[[SearchService], Awaitable[Any]]] = {
    "nested cursor": lambda s: s.search(
        SearchRequest.build(collection="instances", kind="Pod", cursor=encoded("[" * 3000))
    ),
    "huge cursor": lambda s: s.search(
        SearchRequest.build(collection="instances", kind="Pod", cursor=encoded("[" * 100_000))
    ),
    "nested changes cursor": lambda s: s.changes(ChangesRequest(cursor=encoded('{"before":' * 3000))),
    "long cluster in a search": lambda s: s.search(
        SearchRequest.build(collection="instances", kind="Pod", cluster=LONG)
    ),
    "long cluster in resolve_kind": lambda s: s.resolve_kind("Pod", cluster=LONG),
    "long cluster in facets": lambda s: s.facets("instances", "kind", cluster=LONG),
    "long cluster in get_document": lambda s: s.find_document("x", cluster=LONG),
    "long cluster in related": lambda s: s.related("Pod/ns/x", cluster=LONG),
}


@pytest.mark.parametrize("case", sorted(CALLS))
async def test_a_bad_argument_is_one_clear_error(case: str) -> None:
    with pytest.raises(SearchError) as caught:
        await CALLS[case](await service())
    message = str(caught.value)
    assert "\n" not in message
    assert any(word in message for word in ("cursor", "cluster")), message
