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
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Collection
from typing import Any

import kopf
from kopf._cogs.clients import fetching

from controller.kube import PAGE_SIZE
from controller.reconcile import CRD_RESOURCE

#: CRDs per page of kopf's listings (bodies of large CRDs are megabytes each).
CRD_PAGE_SIZE = 25

_FetchObjs = Callable[..., AsyncIterator[tuple[Collection[Any], str]]]


def page_size_for(resource: kopf.Resource) -> int:
    if resource.group == CRD_RESOURCE.group and resource.plural == CRD_RESOURCE.plural:
        return CRD_PAGE_SIZE
    return PAGE_SIZE


def list_in_pages() -> None:
    """Install, once per process, kopf listings paged by :func:`page_size_for`."""
    current: _FetchObjs = fetching.fetch_objs
    original: _FetchObjs = getattr(current, "__wrapped__", current)

    async def fetch_objs_in_pages(
        *, settings: kopf.OperatorSettings, resource: kopf.Resource, **kwargs: Any
    ) -> AsyncIterator[tuple[Collection[Any], str]]:
        paged = dataclasses.replace(
            settings, watching=dataclasses.replace(settings.watching, chunk_size=page_size_for(resource))
        )
        async for page in original(settings=paged, resource=resource, **kwargs):
            yield page

    fetch_objs_in_pages.__wrapped__ = original  # type: ignore[attr-defined]
    fetching.fetch_objs = fetch_objs_in_pages
