"""kopf's initial listings in pages: CRDs a few at a time, other resources 500 at a time.

Before each watch, kopf lists what exists, by default in one request: at 400 CRDs that is one
JSON document of ~50 MB decoded at once (Argo's three CRDs alone are 2.8 MB each), and kopf
lists CRDs twice (its own observer and our ``on.event`` handler), which made it the largest
single part of the controller's peak memory. kopf can list in chunks
(``settings.watching.chunk_size``) but has one size for every resource, and a size that suits
CRDs (hundreds of KB each) would cut 20,000 small objects into a thousand requests. This gives
CRDs pages of 25 and other resources the resync's 500 (the resync itself lists CRDs as
metadata only): kopf handles a page before it fetches the next one, so only one page of bodies
is alive at a time.

Two listings ask for a resource version only (one object's metadata), no bodies: kopf's resource
observer's listing of CRDs, which it ignores (it discovers resources through API discovery, and
reacts to CRD watch events only), and, at start-up, the first listing of each resource handed over
to the first resync (:mod:`kubevec.controller.sync.handover`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Collection
from typing import Any, Final

import kopf
from kopf._cogs.clients import api, fetching

from kubevec.controller.kube.client import METADATA_ONLY, PAGE_SIZE
from kubevec.controller.sync.handover import Handover
from kubevec.controller.sync.reconcile import CRD_RESOURCE

#: CRDs per page of kopf's listings (bodies of large CRDs are megabytes each).
CRD_PAGE_SIZE = 25

_FetchObjs = Callable[..., AsyncIterator[tuple[Collection[Any], str]]]

#: kopf's names for its tasks (``kopf._core.reactor.running`` and ``orchestration``): who is listing.
OBSERVER_TASK: Final = "resource observer"
WATCHER_TASK: Final = "watcher for "

_handover: Handover | None = None


def page_size_for(resource: kopf.Resource) -> int:
    return CRD_PAGE_SIZE if is_crds(resource) else PAGE_SIZE


def is_crds(resource: kopf.Resource) -> bool:
    return resource.group == CRD_RESOURCE.ref.group and resource.plural == CRD_RESOURCE.ref.plural


def list_in_pages(*, handover: Handover | None = None) -> None:
    """Install, once per process, kopf listings paged by :func:`page_size_for`; ``handover`` replaces the last one."""
    global _handover
    _handover = handover
    current: _FetchObjs = fetching.fetch_objs
    original: _FetchObjs = getattr(current, "__wrapped__", current)

    async def fetch_objs_in_pages(
        *, settings: kopf.OperatorSettings, resource: kopf.Resource, **kwargs: Any
    ) -> AsyncIterator[tuple[Collection[Any], str]]:
        task = asyncio.current_task()
        who = task.get_name() if task is not None else ""
        if who == OBSERVER_TASK and is_crds(resource):
            yield [], await resource_version(settings=settings, resource=resource, **kwargs)
            return
        handover, key = _handover, (resource.group, resource.plural)
        if (
            handover is not None
            and who.startswith(WATCHER_TASK)
            and handover.shares(
                group=resource.group, plural=resource.plural, verbs=resource.verbs, preferred=resource.preferred
            )
            and handover.take(key)
        ):
            try:
                version = await resource_version(settings=settings, resource=resource, **kwargs)
            finally:
                handover.started(key)
            yield [], version
            return
        paged = dataclasses.replace(
            settings, watching=dataclasses.replace(settings.watching, chunk_size=page_size_for(resource))
        )
        async for page in original(settings=paged, resource=resource, **kwargs):
            yield page

    fetch_objs_in_pages.__wrapped__ = original  # type: ignore[attr-defined]
    fetching.fetch_objs = fetch_objs_in_pages


async def resource_version(
    *, settings: kopf.OperatorSettings, resource: kopf.Resource, namespace: Any, logger: Any
) -> str:
    """The resource version a watch of ``resource`` starts from, read from one object's metadata."""
    page = await api.get(
        url=resource.get_url(namespace=namespace, params={"limit": "1"}),
        headers={"Accept": METADATA_ONLY},
        settings=settings,
        logger=logger,
    )
    return str((page.get("metadata") or {}).get("resourceVersion") or "")
