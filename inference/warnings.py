"""The latest Warning Event of each object: what ``kubectl describe`` shows at the bottom, as metadata.

Kubernetes says why an object is unwell in Events as often as in its status: ``FailedScheduling``,
``FailedMount``, ``BackOff``, ``FailedCreate`` with the quota that refused a Pod,
``FailedGetResourceMetric``. Events are read (never written) from ``v1`` Events of type
``Warning``, each for the object it regards (``involvedObject``, by uid); an object's latest one,
by the time it last happened, becomes ``warning_reason`` and ``warning_message`` in its document's
metadata. Metadata only: a warning changes no text, so it never costs an embedding; and neither
its time nor its count is stored, so an Event repeating itself (``BackOff`` every few minutes)
writes nothing. When the Event goes (the API server keeps them an hour), so does the warning.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from kubevec.inference.health import clean_message, clean_word
from kubevec.inference.identity import ObjectName


@dataclasses.dataclass(frozen=True, kw_only=True)
class Warning:
    """One Warning Event, reduced to what a document keeps and what orders it."""

    reason: str
    message: str
    #: When it last happened (RFC 3339, compared as text); only to pick the latest, never stored.
    at: str
    #: The Event's own ``namespace/name``: the tie-break, and what its deletion removes.
    event: str

    def metadata(self) -> dict[str, str]:
        out = {}
        reason, message = clean_word(self.reason), clean_message(self.message)
        if reason:
            out["warning_reason"] = reason
        if message:
            out["warning_message"] = message
        return out

    @property
    def digest(self) -> str:
        """What a document built with this warning was built from (see ``DocumentBuilder``)."""
        return hashlib.sha256(f"{self.reason}\0{self.message}".encode()).hexdigest()[:12]


def named(*, kind: str, namespace: str | None, name: str) -> str:
    """The key of an object a Warning Event names without its uid: ``Kind/namespace/name``."""
    return f"{kind}/{namespace or '_cluster'}/{name}"


def named_of(body: Mapping[str, Any]) -> str | None:
    """The key a Warning Event without a uid regards ``body`` by (see :func:`named`)."""
    meta, kind = body.get("metadata"), body.get("kind")
    who = ObjectName.of(meta if isinstance(meta, Mapping) else {})
    return named(kind=kind, namespace=who.namespace, name=who.name) if isinstance(kind, str) and who.name else None


def warning_of(event: Mapping[str, Any]) -> tuple[str, Warning] | None:
    """``(uid of the object it regards, Warning)`` for a ``v1`` Warning Event, else None (odd shapes too).

    An Event whose ``involvedObject`` has no uid (written by hand, or by a tool that did not look it up)
    regards its object by kind, namespace and name instead (:func:`named`): :meth:`Warnings.latest`
    reads both."""
    if not isinstance(event, Mapping) or event.get("type") != "Warning":
        return None
    involved = event.get("involvedObject") or event.get("regarding")
    meta = event.get("metadata")
    if not isinstance(involved, Mapping) or not isinstance(meta, Mapping):
        return None
    who = ObjectName.of(meta)
    uid, reason = involved.get("uid"), event.get("reason")
    if not isinstance(uid, str) or not uid:
        # an Event written by hand or by a tool that did not know the uid: its object by kind and name
        kind, name = involved.get("kind"), involved.get("name")
        namespace = involved.get("namespace") or who.namespace
        if not isinstance(kind, str) or not isinstance(name, str) or not kind or not name:
            return None
        uid = named(kind=kind, namespace=namespace if isinstance(namespace, str) else None, name=name)
    if not isinstance(reason, str) or not reason:
        return None
    message = event.get("message") or event.get("note") or ""
    series = event.get("series")
    times = [
        series.get("lastObservedTime") if isinstance(series, Mapping) else None,
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        who.created,
    ]
    at = next((str(t) for t in times if isinstance(t, str) and t), "")
    name = f"{who.namespace}/{who.name}"
    return uid, Warning(reason=reason, message=str(message), at=at, event=name)


#: Warning Events held at most (a cluster keeps an hour of them; a storm past this waits for a resync).
MAX_EVENTS = 50_000


class Warnings:
    """Every object's Warning Events (by the object's uid), and the latest of each.

    Fed by the watch (:meth:`observe`) and replaced whole by each resync's listing (:meth:`replace`),
    so a missed deletion lasts one resync at most. Bounded by :data:`MAX_EVENTS`."""

    def __init__(self) -> None:
        self._by_object: dict[str, dict[str, Warning]] = {}
        self._object_of: dict[str, str] = {}  # event -> the uid it regards

    def latest(self, uid: str | None, *, key: str | None = None) -> Warning | None:
        """The latest warning regarding the object with ``uid``, or named ``key`` (see :func:`named`)."""
        events = {**self._by_object.get(uid or "", {}), **(self._by_object.get(key, {}) if key else {})}
        return max(events.values(), key=lambda w: (w.at, w.event)) if events else None

    def observe(self, *, event_type: str | None, body: Mapping[str, Any]) -> str | None:
        """Take one watch event; the uid of the object whose latest warning it changed, if it did."""
        found = warning_of(body)
        if found is None:
            return None
        uid, warning = found
        before = self.latest(uid)
        if event_type == "DELETED":
            self._forget(warning.event)
        elif warning.event in self._object_of or len(self._object_of) < MAX_EVENTS:
            self._forget(warning.event)
            self._by_object.setdefault(uid, {})[warning.event] = warning
            self._object_of[warning.event] = uid
        after = self.latest(uid)
        return uid if _said(before) != _said(after) else None

    def replace(self, events: Iterable[Mapping[str, Any]]) -> set[str]:
        """Take a whole listing; the uids whose latest warning changed."""
        before = {uid: _said(self.latest(uid)) for uid in self._by_object}
        self._by_object.clear()
        self._object_of.clear()
        for event in events:
            found = warning_of(event)
            if found is not None and len(self._object_of) < MAX_EVENTS:
                uid, warning = found
                self._by_object.setdefault(uid, {})[warning.event] = warning
                self._object_of[warning.event] = uid
        uids = set(before) | set(self._by_object)
        return {uid for uid in uids if before.get(uid) != _said(self.latest(uid))}

    def __len__(self) -> int:
        return len(self._object_of)

    def _forget(self, event: str) -> None:
        uid = self._object_of.pop(event, None)
        if uid is None:
            return
        events = self._by_object.get(uid, {})
        events.pop(event, None)
        if not events:
            self._by_object.pop(uid, None)


def _said(warning: Warning | None) -> tuple[str, str] | None:
    """What a document shows of a warning: a new time of the same warning changes nothing."""
    return (warning.reason, warning.message) if warning is not None else None
