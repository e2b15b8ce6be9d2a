"""KubeReader.iter_pages reads what the API server really sends, including its empty lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.kube import METADATA_ONLY, KubeReader
from controller.reconcile import CRD_RESOURCE


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
