"""kopf's listings: in pages sized per resource (CRDs 25, other resources 500), or a resource version only."""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from typing import Any

import kopf
import pytest
from kopf._cogs.clients import api, errors, fetching

from kubevec.controller.kopf_private.paging import OBSERVER_TASK, list_in_pages
from kubevec.controller.kube.client import METADATA_ONLY
from kubevec.controller.sync.handover import Handover

CRDS = kopf.Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
WIDGETS = kopf.Resource("example.com", "v1", "widgets", namespaced=True, verbs=["list", "watch"], preferred=True)
POLICIES = kopf.Resource("kubevec.io", "v1alpha1", "syncpolicies", verbs=["list", "watch"], preferred=True)


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """An API that serves 60 items, honouring ``limit`` and ``continue`` as the apiserver does."""
    # kopf's own function (an in-process controller of an earlier test may have installed the
    # paging already: it is process-wide), put back after the test.
    monkeypatch.setattr(fetching, "fetch_objs", getattr(fetching.fetch_objs, "__wrapped__", fetching.fetch_objs))
    seen: list[dict[str, str]] = []

    async def get(*, url: str, headers: dict[str, str] | None = None, **_: Any) -> dict[str, Any]:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        if headers and headers.get("Accept") == METADATA_ONLY:
            query["accept"] = "metadata"
        seen.append(query)
        start = int(query.get("continue") or 0)
        limit = int(query.get("limit") or 60)
        end = min(start + limit, 60)
        items = [{"metadata": {"name": f"item-{i}"}} for i in range(start, end)]
        return {"items": items, "metadata": {"resourceVersion": "7", "continue": str(end) if end < 60 else ""}}

    monkeypatch.setattr(api, "get", get)
    return seen


async def pages(resource: kopf.Resource, *, task: str | None = None) -> list[int]:
    """The sizes of the pages kopf's listing gets, listed from a task named as kopf names its own."""

    async def listing() -> list[int]:
        logger = logging.getLogger("test")
        settings = kopf.OperatorSettings()
        return [
            len(items)
            async for items, version in fetching.fetch_objs(
                settings=settings, resource=resource, namespace=None, logger=logger
            )
            if version == "7"
        ]

    return await asyncio.create_task(listing(), name=task)


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


async def test_kopfs_resource_observer_gets_a_resource_version_not_the_crds(requests: list[dict[str, str]]) -> None:
    """kopf's observer ignores what its listing of CRDs returns (it discovers resources through /apis)."""
    list_in_pages()
    assert await pages(CRDS, task=OBSERVER_TASK) == [0]
    assert requests == [{"limit": "1", "accept": "metadata"}]
    requests.clear()
    assert await pages(CRDS, task="watcher for customresourcedefinitions.v1.apiextensions.k8s.io") == [25, 25, 10]


def shared_handover() -> Handover:
    handover = Handover(shares=lambda group, plural, verbs, preferred: plural != "syncpolicies")
    handover.begin()
    return handover


async def test_a_first_listing_handed_over_to_the_resync_gets_a_resource_version(
    requests: list[dict[str, str]],
) -> None:
    handover = shared_handover()
    list_in_pages(handover=handover)
    watcher = "watcher for widgets.v1.example.com"
    assert await pages(WIDGETS, task=watcher) == [0]
    assert requests == [{"limit": "1", "accept": "metadata"}]
    await asyncio.wait_for(handover.before_listing(("example.com", "widgets")), timeout=1)  # no wait: kopf has it
    requests.clear()
    assert await pages(WIDGETS, task=watcher) == [60]  # kopf lists again (410 Gone): the whole list
    assert await pages(CRDS, task="watcher for customresourcedefinitions") == [0]  # our on.event CRD handler's
    # kopf's own listings, SyncPolicies (the event path needs them), and any listing after the first resync.
    requests.clear()
    assert await pages(POLICIES, task="watcher for syncpolicies.v1alpha1.kubevec.io") == [60]
    assert await pages(CRDS, task="peering observer for x") == [25, 25, 10]
    handover.close()
    gadgets = kopf.Resource("example.com", "v1", "gadgets", verbs=["list", "watch"], preferred=True)
    assert await pages(gadgets, task="watcher for gadgets.v1.example.com") == [60]
    assert all(query.get("accept") is None for query in requests)


async def test_a_failed_resource_version_request_lets_the_resync_list_and_kopf_retry_in_full(
    requests: list[dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    handover = shared_handover()
    list_in_pages(handover=handover)

    async def refused(**_: Any) -> dict[str, Any]:
        raise errors.APIForbiddenError({"code": 403}, status=403, headers={})

    monkeypatch.setattr(api, "get", refused)
    with pytest.raises(errors.APIForbiddenError):
        await pages(WIDGETS, task="watcher for widgets")
    await asyncio.wait_for(handover.before_listing(("example.com", "widgets")), timeout=1)
    assert not handover.take(("example.com", "widgets"))
