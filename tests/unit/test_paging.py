"""kopf's initial listings come in pages sized per resource (CRDs 25, other resources 500)."""

from __future__ import annotations

import logging
import urllib.parse
from typing import Any

import kopf
import pytest
from kopf._cogs.clients import api, fetching

from controller.paging import list_in_pages

CRDS = kopf.Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
WIDGETS = kopf.Resource("example.com", "v1", "widgets", namespaced=True)


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """An API that serves 60 items, honouring ``limit`` and ``continue`` as the apiserver does."""
    # kopf's own function (an in-process controller of an earlier test may have installed the
    # paging already: it is process-wide), put back after the test.
    monkeypatch.setattr(fetching, "fetch_objs", getattr(fetching.fetch_objs, "__wrapped__", fetching.fetch_objs))
    seen: list[dict[str, str]] = []

    async def get(*, url: str, **_: Any) -> dict[str, Any]:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        seen.append(query)
        start = int(query.get("continue") or 0)
        limit = int(query.get("limit") or 60)
        end = min(start + limit, 60)
        items = [{"metadata": {"name": f"item-{i}"}} for i in range(start, end)]
        return {"items": items, "metadata": {"resourceVersion": "7", "continue": str(end) if end < 60 else ""}}

    monkeypatch.setattr(api, "get", get)
    return seen


async def pages(resource: kopf.Resource) -> list[int]:
    logger = logging.getLogger("test")
    settings = kopf.OperatorSettings()
    return [
        len(items)
        async for items, _ in fetching.fetch_objs(settings=settings, resource=resource, namespace=None, logger=logger)
    ]


async def test_crds_are_listed_25_at_a_time_other_resources_500(requests: list[dict[str, str]]) -> None:
    list_in_pages()
    list_in_pages()  # installing twice wraps kopf's function once
    assert await pages(CRDS) == [25, 25, 10]
    assert [q.get("limit") for q in requests] == ["25", "25", "25"]
    assert [q.get("continue") for q in requests] == [None, "25", "50"]
    requests.clear()
    assert await pages(WIDGETS) == [60]
    assert [q.get("limit") for q in requests] == ["500"]


async def test_without_it_kopf_lists_everything_in_one_request(requests: list[dict[str, str]]) -> None:
    assert await pages(CRDS) == [60]
    assert requests == [{}]
