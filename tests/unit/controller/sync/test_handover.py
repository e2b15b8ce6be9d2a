"""The start-up handover: the first resync lists a resource only once kopf's watch of it has begun."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

import pytest

from kubevec.controller.sync import handover as handover_module
from kubevec.controller.sync.handover import Handover

CONFIGMAPS = ("", "configmaps")


def everything(group: str, plural: str, verbs: Collection[str], preferred: bool) -> bool:
    return True


def opened() -> Handover:
    handover = Handover(shares=everything)
    handover.begin()
    return handover


def test_kopf_asks_for_a_resource_version_only_once_per_resource_and_only_while_open() -> None:
    idle = Handover(shares=everything)
    assert not idle.take(CONFIGMAPS)  # not begun: kopf is not the one watching (tests, CLI)
    handover = opened()
    assert handover.take(CONFIGMAPS)
    assert not handover.take(CONFIGMAPS)  # a later listing (after 410 Gone) is a full one
    handover.close()
    assert not handover.take(("", "services"))
    handover.begin()
    assert not handover.open  # closed for good: a later resync never waits


async def test_the_resync_lists_only_after_kopf_has_its_resource_version() -> None:
    handover = opened()
    assert handover.take(CONFIGMAPS)
    listing = asyncio.create_task(handover.before_listing(CONFIGMAPS))
    await asyncio.sleep(0.05)
    assert not listing.done()  # kopf's request is in flight: its watch may begin after a listing now
    handover.started(CONFIGMAPS)
    await asyncio.wait_for(listing, timeout=1)


async def test_the_resync_waits_for_kopf_to_reach_a_resource() -> None:
    handover = opened()
    listing = asyncio.create_task(handover.before_listing(CONFIGMAPS))
    await asyncio.sleep(0.05)
    assert not listing.done()
    assert handover.take(CONFIGMAPS)
    handover.started(CONFIGMAPS)
    await asyncio.wait_for(listing, timeout=1)


async def test_a_resource_kopf_does_not_reach_in_time_is_listed_and_kopf_lists_it_fully(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(handover_module, "WAIT_SECONDS", 0.1)
    handover = opened()
    await asyncio.wait_for(handover.before_listing(CONFIGMAPS), timeout=1)
    assert not handover.take(CONFIGMAPS)  # the resync listed it already: kopf's listing must be whole
    # The wait is one deadline for the whole resync, not one per resource.
    await asyncio.wait_for(handover.before_listing(("", "services")), timeout=0.05)


async def test_after_the_first_resync_nothing_waits() -> None:
    handover = opened()
    assert handover.take(CONFIGMAPS)
    waiting = asyncio.create_task(handover.before_listing(CONFIGMAPS))
    await asyncio.sleep(0.01)
    handover.close()  # e.g. the first resync failed: no one may wait forever
    await asyncio.wait_for(waiting, timeout=1)
    await asyncio.wait_for(handover.before_listing(("", "services")), timeout=0.05)
