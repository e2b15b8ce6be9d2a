"""The one home of kopf's private API (``kopf._cogs``...): what kubevec changes in kopf, installed by one call.

A kopf upgrade touches only this package: :func:`install` is called once, from the operator's start-up.

- ``discovery``: skip an API group that is down instead of ending the operator; end the watch of a
  resource that vanished; read a kind served only at a version its group does not prefer;
- ``paging``: kopf's initial listings in pages (CRDs a few at a time), handed over to the first resync;
- ``kopf._cogs.clients.watching``'s 410 lines, lifted to one INFO line per interval
  (:class:`~kubevec.controller.runtime.logs.WatchRestartFilter`);
- the TLS read buffers of asyncio's SSL transport (``kubevec.controller.runtime.tls``): kopf holds one
  connection per watched resource.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kubevec.controller.kopf_private.discovery import (
    read_each_kind_at_its_version,
    tolerate_unavailable_groups,
    tolerate_vanished_resources,
)
from kubevec.controller.kopf_private.paging import list_in_pages
from kubevec.controller.runtime.logs import WatchRestartFilter
from kubevec.controller.runtime.tls import small_tls_buffers
from kubevec.controller.sync.handover import Handover


def install(*, handover: Handover | None, on_discovery_error: Callable[[], None] = lambda: None) -> None:
    """Every change kubevec makes to kopf (and asyncio's TLS buffers), once; calling it again changes nothing."""
    tolerate_unavailable_groups(on_skip=lambda group: on_discovery_error())
    tolerate_vanished_resources(on_vanish=lambda resource: on_discovery_error())
    read_each_kind_at_its_version()
    list_in_pages(handover=handover)
    lift_watch_restarts()
    small_tls_buffers()


#: kopf's logger of its watch streams: a private module's name.
WATCHING_LOGGER = "kopf._cogs.clients.watching"


def lift_watch_restarts() -> None:
    """kopf logs each "410 Gone, restarting the watch" at DEBUG: one INFO line per interval instead."""
    watching = logging.getLogger(WATCHING_LOGGER)
    if any(isinstance(existing, WatchRestartFilter) for existing in watching.filters):
        return
    watching.setLevel(logging.DEBUG)  # the filter lets only its 410 lines (as INFO) and >= the root's level through
    watching.addFilter(WatchRestartFilter(level=logging.getLogger().getEffectiveLevel()))
