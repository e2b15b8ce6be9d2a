"""The one home of kopf's private API (``kopf._cogs``...): what kubevec changes in kopf, installed by one call.

A kopf upgrade touches only this package: :func:`install` is called once, from the operator's start-up.

- ``discovery``: skip an API group that is down instead of ending the operator; end the watch of a
  resource that vanished; read a kind served only at a version its group does not prefer;
- ``paging``: kopf's initial listings in pages (CRDs a few at a time), handed over to the first resync;
- the TLS read buffers of asyncio's SSL transport (``kubevec.controller.runtime.tls``): kopf holds one
  connection per watched resource.
"""

from __future__ import annotations

from collections.abc import Callable

from kubevec.controller.kopf_private.discovery import (
    read_each_kind_at_its_version,
    tolerate_unavailable_groups,
    tolerate_vanished_resources,
)
from kubevec.controller.kopf_private.paging import list_in_pages
from kubevec.controller.runtime.tls import small_tls_buffers
from kubevec.controller.sync.handover import Handover


def install(*, handover: Handover | None, on_discovery_error: Callable[[], None] = lambda: None) -> None:
    """Every change kubevec makes to kopf (and asyncio's TLS buffers), once; calling it again changes nothing."""
    tolerate_unavailable_groups(on_skip=lambda group: on_discovery_error())
    tolerate_vanished_resources(on_vanish=lambda resource: on_discovery_error())
    read_each_kind_at_its_version()
    list_in_pages(handover=handover)
    small_tls_buffers()
