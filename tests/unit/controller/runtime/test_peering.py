"""kopf's peering rule, applied by the App: pause while a live peer has a higher or equal priority."""

from __future__ import annotations

import datetime

from kubevec.controller.runtime.peering import PeeringIdentity, is_active

NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.UTC)
ME = PeeringIdentity(name="p", identity="me", priority=50, lifetime=60)


def peer(priority: int, seconds_ago: int, lifetime: int = 60) -> dict[str, object]:
    return {
        "priority": priority,
        "lifetime": lifetime,
        "lastseen": (NOW - datetime.timedelta(seconds=seconds_ago)).isoformat(),
    }


def test_alone_or_highest_is_active() -> None:
    assert is_active(me=ME, status=None, now=NOW)
    assert is_active(me=ME, status={"me": peer(50, 0), "other": peer(10, 1)}, now=NOW)


def test_higher_or_equal_live_peer_pauses_us() -> None:
    assert not is_active(me=ME, status={"other": peer(90, 5)}, now=NOW)
    assert not is_active(me=ME, status={"other": peer(50, 5)}, now=NOW)


def test_dead_or_malformed_peers_do_not_count() -> None:
    assert is_active(me=ME, status={"other": peer(90, 120)}, now=NOW)
    assert is_active(me=ME, status={"other": {"priority": "high"}, "x": "nonsense"}, now=NOW)


def test_random_priorities_are_positive_and_distinct() -> None:
    ids = [PeeringIdentity.create(name="p", priority=None, lifetime=60) for _ in range(20)]
    assert len({i.identity for i in ids}) == 20
    assert all(i.priority > 0 for i in ids)
