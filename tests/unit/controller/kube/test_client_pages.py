"""KubeReader.iter_pages reads what the API server really sends, including its empty lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubevec.controller.kube.client import METADATA_ONLY, KubeReader
from kubevec.controller.sync.reconcile import CRD_RESOURCE


class Replies(KubeReader):
    def __init__(self, *pages: dict[str, Any]) -> None:
        super().__init__()
        self.pages = list(pages)
        self.asked: list[tuple[dict[str, Any], str]] = []

    async def get(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        request_timeout: float = 60,
        accept: str = "application/json",
    ) -> Any:
        self.asked.append((dict(query or {}), accept))
        return self.pages.pop(0)


async def test_an_empty_metadata_only_list_has_null_items() -> None:
    """Regression: with no CRD left, the server answers ``"items": null`` and a resync raised TypeError."""
    reader = Replies({"kind": "PartialObjectMetadataList", "metadata": {"resourceVersion": "9"}, "items": None})
    pages = [page async for page in reader.iter_pages(CRD_RESOURCE, metadata_only=True)]
    assert pages == [[]]
    assert reader.asked == [({"limit": 500}, METADATA_ONLY)]


async def test_metadata_pages_follow_continue_tokens() -> None:
    reader = Replies(
        {"metadata": {"continue": "t1"}, "items": [{"metadata": {"name": "a.example.com", "generation": 1}}]},
        {"metadata": {"continue": ""}, "items": [{"metadata": {"name": "b.example.com", "generation": 3}}]},
    )
    pages = [page async for page in reader.iter_pages(CRD_RESOURCE, metadata_only=True, page_size=1)]
    assert [[item["metadata"]["name"] for item in page] for page in pages] == [["a.example.com"], ["b.example.com"]]
    assert [query for query, _ in reader.asked] == [{"limit": 1}, {"limit": 1, "continue": "t1"}]


async def test_a_page_is_let_go_before_the_next_is_fetched() -> None:
    """Regression: the reader kept each page until the next one was decoded: two pages of bodies at
    once (46 MiB at the peak of an initial sync with 20,000 objects, pages of 500)."""
    import gc
    import weakref

    class Item(dict[str, Any]):
        pass

    first = Item(metadata={"name": "a"})
    alive: list[bool] = []
    reader = Replies({"metadata": {"continue": "t1"}, "items": [first]}, {"metadata": {}, "items": [Item()]})
    get = reader.get
    previous = weakref.ref(first)
    del first

    async def fetch(path: str, **kwargs: Any) -> Any:
        gc.collect()
        alive.append(previous() is not None)
        return await get(path, **kwargs)

    reader.get = fetch  # type: ignore[method-assign]
    async for page in reader.iter_pages(CRD_RESOURCE, page_size=1):
        del page  # what the resync does once a page's documents are built
    assert alive == [True, False]


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, "KubeUnauthorized"), (403, "KubeForbidden"), (404, "KubeNotFound"), (409, "KubeConflict"),
     (500, "KubeServerError"), (503, "KubeServerError"), (422, "KubeError"), (None, "KubeError")],
)  # fmt: skip
def test_an_http_status_becomes_an_error_class_in_one_place(status: int | None, kind: str) -> None:
    """issue 31: callers read "HTTP 403" out of reason strings; now they catch a class."""
    from kubevec.controller.kube import errors as kube

    error = kube.kube_error("GET /x failed", status=status, reason=f"HTTP {status}")
    assert type(error).__name__ == kind
    assert isinstance(error, kube.KubeError)
    assert error.status == status
