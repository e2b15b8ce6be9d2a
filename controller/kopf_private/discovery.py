"""kopf's API discovery, made to skip an API group that is down instead of ending the operator.

kopf 1.45 reads every group version when it starts (``scanning._read_version``) and lets a 5xx
from one of them end the operator once its retries run out (about 48 s with our backoffs). An
aggregated API whose backend is down (metrics-server not running, a webhook service gone) answers
503 for weeks in real clusters: without this, kubevec would restart forever over a group it does
not even need. kubevec's own discovery (``KubeReader.discover``) already skips such a group and
tries it again on every resync; this gives kopf's watches the same rule, after one quick retry.

What is lost while a group is skipped: watch events for its objects. The resync still lists
them, so the store stays exact within one interval; kopf watches the group after the next
restart or the next CRD change in it.

kopf also reads every resource only at its group's preferred version;
:func:`read_each_kind_at_its_version` makes it read one served only at other versions too
(prometheus-operator's AlertmanagerConfig), at the version kubevec's own discovery picks
(``controller/kube/versions.py``).

The same holds for a resource whose CRD was just deleted: kopf stops its watcher only when its
discovery notices, and a watcher that re-lists in between (after a timeout, a 410 or a reconnect)
gets 404, which kopf 1.45 lets end the whole operator (seen in CI: ``APINotFoundError: 404 page
not found`` and exit 1 moments after a CRD deletion). :func:`tolerate_vanished_resources` ends
that one stream instead and waits before kopf tries again, until its discovery drops the watcher
(or the CRD is back).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

import kopf
from kopf._cogs.clients import errors, scanning, watching

from kubevec.controller.kube.versions import chosen

logger = logging.getLogger(__name__)

QUICK_BACKOFFS = (1.0,)  # one retry: a group that answers 503 twice is down, not starting
VANISHED_RETRY_SECONDS = 5.0  # between lists of a resource that answered 404, until kopf drops it

_Discovery = Callable[..., Awaitable[Collection[kopf.Resource]]]


def tolerate_unavailable_groups(*, on_skip: Callable[[str], None] = lambda group: None) -> None:
    """Install the skipping discovery once per process; ``on_skip(group)`` counts each skip."""
    current: _Discovery = scanning._read_version
    original: _Discovery = getattr(current, "__wrapped__", current)

    async def read_version_or_skip(
        *, url: str, group: str, settings: kopf.OperatorSettings, **kwargs: Any
    ) -> Collection[kopf.Resource]:
        quick = dataclasses.replace(
            settings, networking=dataclasses.replace(settings.networking, error_backoffs=QUICK_BACKOFFS)
        )
        try:
            return await original(url=url, group=group, settings=quick, **kwargs)
        except errors.APIServerError as exc:
            logger.warning("Not watching an unavailable API group group=%s url=%s error=%s", group, url, exc)
            on_skip(group)
            return set()

    read_version_or_skip.__wrapped__ = original  # type: ignore[attr-defined]
    scanning._read_version = read_version_or_skip


def read_each_kind_at_its_version() -> None:
    """Install, once per process, a discovery that marks each resource's chosen version as preferred.

    kopf's versionless selectors (and kubevec's filter, which asks for ``preferred``) then watch a
    resource that its group's preferred version does not serve, at its own highest-priority version.
    """
    current: _Discovery = scanning.scan_resources
    original: _Discovery = getattr(current, "__wrapped__", current)

    async def scan_resources(**kwargs: Any) -> Collection[kopf.Resource]:
        return each_at_its_version(await original(**kwargs))

    scan_resources.__wrapped__ = original  # type: ignore[attr-defined]
    scanning.scan_resources = scan_resources


def each_at_its_version(resources: Collection[kopf.Resource]) -> set[kopf.Resource]:
    """``resources`` with, for each (group, plural) that no preferred version serves, its best version
    marked preferred."""
    by_plural: dict[tuple[str, str], list[kopf.Resource]] = {}
    for resource in resources:
        by_plural.setdefault((resource.group, resource.plural), []).append(resource)
    out = set(resources)
    for candidates in by_plural.values():
        if any(resource.preferred for resource in candidates):
            continue
        best = chosen(((r.version, r) for r in candidates), preferred=None)
        if best is not None:
            out.discard(best[1])
            out.add(dataclasses.replace(best[1], preferred=True))
    return out


def tolerate_vanished_resources(
    *, on_vanish: Callable[[str], None] = lambda resource: None, retry_seconds: float = VANISHED_RETRY_SECONDS
) -> None:
    """Install, once per process, a watch stream that ends on 404 instead of raising it.

    ``on_vanish(resource)`` counts each one; the warning is logged once per resource until it
    answers again.
    """
    current = watching.continuous_watch
    original = getattr(current, "__wrapped__", current)
    vanished: set[str] = set()

    async def continuous_watch_or_end(**kwargs: Any) -> Any:
        resource = str(kwargs.get("resource"))
        try:
            async for item in original(**kwargs):
                vanished.discard(resource)
                yield item
        except errors.APINotFoundError as exc:
            if resource not in vanished:
                vanished.add(resource)
                logger.warning("Stopped watching a resource that no longer exists resource=%s error=%s", resource, exc)
                on_vanish(resource)
            await asyncio.sleep(retry_seconds)

    continuous_watch_or_end.__wrapped__ = original  # type: ignore[attr-defined]
    watching.continuous_watch = continuous_watch_or_end
