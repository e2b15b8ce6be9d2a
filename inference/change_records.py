"""What changed: one record per observed change of an indexed object, built from its documents alone.

Kubernetes forgets (Events expire within an hour, objects keep no history); the controller sees every
change of every object it indexes. When an instance document is written, the one it replaces is
compared with it: the fields of the instance text whose values changed (images, replicas, labels,
spec fields...) and the coarse health make one line,

    Deployment prod/payments-api: image ghcr.io/acme/payments-api 2.3.0 -> 2.3.1; health healthy -> degraded (ProgressDeadlineExceeded)

A write that changes none of them (a new uid-less bookkeeping field, a health *reason* under the
same health: status churn) makes no record. Both documents passed the redactor already, and the
record passes it again (:func:`kubevec.inference.documents.redact_metadata`).

A record's id is the object's id with the hashes of both documents: the same change written twice
(a flush retried after a store failure) is one record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any, Final, Literal

from kubevec.core.fields import (
    CONTENT_HASH,
    GROUP,
    HEALTH,
    HEALTH_REASON,
    KIND,
    LABELS,
    NAME,
    NAMESPACE,
    OBJECT,
    RESOURCE,
)
from kubevec.inference.documents import MetadataValue, clean_text, redact_metadata
from kubevec.inference.identity import parse_instance_id
from kubevec.inference.redaction import REDACTED, is_credential_name, redact_text

CHANGES: Final = "changes"
Change = Literal["created", "updated", "deleted"]
#: Payload fields agents filter the history on (indexed by server backends).
CHANGE_FIELDS: Final = ("cluster", "kind", "group", "namespace", "name", "object", "change", "fields", "resource")
#: Instance text segments that are identity, not state.
_IDENTITY: Final = frozenset({"namespace", "apiVersion"})
MAX_VALUE_CHARS: Final = 80
MAX_SUMMARY_CHARS: Final = 600


@dataclasses.dataclass(frozen=True, kw_only=True)
class Stored:
    """A document as stored: its text and payload (the one a write replaces, or the one a delete removes)."""

    text: str
    metadata: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class FieldChange:
    field: str
    before: str
    after: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class ChangeRecord:
    """One change of one object, ready to store: ``text`` is the one-line summary (what is embedded)."""

    id: str
    text: str
    metadata: dict[str, MetadataValue]


def segments(text: str) -> dict[str, str]:
    """An instance text's ``key: value`` segments (``Kind name | namespace: ns | images: ...``), head left out."""
    out: dict[str, str] = {}
    for part in text.split(" | ")[1:]:
        key, sep, value = part.partition(": ")
        if sep:
            out[key.strip()] = value.strip()
    return out


def changed_fields(before: Stored, after: Stored) -> list[FieldChange]:
    """The instance-text fields and the coarse health whose values differ, in the text's order."""
    old, new = segments(before.text), segments(after.text)
    changes = [
        FieldChange(field=key, before=old.get(key, ""), after=new.get(key, ""))
        for key in [*new, *(k for k in old if k not in new)]
        if key not in _IDENTITY and old.get(key, "") != new.get(key, "")
    ]
    health_before, health_after = HEALTH.of(before.metadata), HEALTH.of(after.metadata)
    if health_before != health_after:
        changes.append(FieldChange(field="health", before=health_before, after=health_after))
    return changes


def change_record(
    *, object_id: str, before: Stored | None, after: Stored | None, at: float | None = None
) -> ChangeRecord | None:
    """The record of one write (``before`` None: created; ``after`` None: deleted); None when nothing an
    agent would call a change happened."""
    parsed = parse_instance_id(object_id)
    if parsed is None or (before is None and after is None):
        return None
    at = time.time() if at is None else at
    latest = after or before
    assert latest is not None
    meta = latest.metadata
    where = f"{parsed.namespace}/{parsed.name}" if parsed.namespace else parsed.name
    if before is None:
        change: Change = "created"
        fields: list[FieldChange] = []
        facts = [f"{k} {v}" for k, v in segments(latest.text).items() if k in ("images", "replicas")]
        health = HEALTH.of(meta)
        if health and health != "unknown":
            facts.append(f"health {health}{_reason(meta)}")
        summary = f"{parsed.kind} {where} created" + (f": {'; '.join(facts)}" if facts else "")
    elif after is None:
        change, fields = "deleted", []
        health = HEALTH.of(meta)
        summary = f"{parsed.kind} {where} deleted" + (f" (was {health})" if health and health != "unknown" else "")
    else:
        change, fields = "updated", changed_fields(before, after)
        if not fields:
            return None
        summary = f"{parsed.kind} {where}: " + "; ".join(_describe(f, after=after.metadata) for f in fields)
    # The object's name is an identifier, judged as one (as in the instance document it came from): as
    # part of the sentence, "prod/payments-api-5cb4d8b4b4" read as a token and every generated name
    # (ReplicaSets, Pods, Jobs) became <redacted>. The rest of the line is judged as text.
    head = f"{parsed.kind} {_identifier(parsed.namespace, key='namespace') + '/' if parsed.namespace else ''}"
    head += _identifier(parsed.name, key="name")
    summary = head + redact_text(clean_text(summary[len(f"{parsed.kind} {where}") :]), raw=False)
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 4].rstrip() + " ..."
    before_hash = CONTENT_HASH.of(before.metadata)[:12] if before else "-"
    after_hash = CONTENT_HASH.of(after.metadata)[:12] if after else "-"
    metadata = redact_metadata(
        {
            "cluster": parsed.cluster,
            "kind": parsed.kind,
            "group": GROUP.of(meta) if GROUP.name in meta else parsed.group or "core",
            "version": parsed.version,
            "resource": RESOURCE.of(meta),
            "namespace": parsed.namespace or "",
            "name": parsed.name,
            "change": change,
            "fields": [f.field for f in fields],
            "health": HEALTH.of(meta),
            "labels": LABELS.of(meta) if isinstance(LABELS.raw(meta), list) else [],
            "time": round(at, 3),
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at)),
        },
        identity=(parsed.name, parsed.namespace or ""),
    )
    metadata["object"] = object_id  # the instance document's id, as stored there (ids are not redacted)
    metadata["content_hash"] = _record_hash(summary, metadata)
    return ChangeRecord(id=f"{object_id}@{before_hash}>{after_hash}", text=summary, metadata=metadata)


def _identifier(value: str, *, key: str) -> str:
    """A namespace or object name as the instance payload keeps it: redacted only if it is itself credential-shaped."""
    cleaned = clean_text(value)
    return cleaned if redact_text(cleaned, raw=False, key=key) == cleaned else REDACTED


def _reason(metadata: Mapping[str, Any]) -> str:
    reason = HEALTH_REASON.of(metadata)
    return f" ({reason})" if reason else ""


def _describe(change: FieldChange, *, after: Mapping[str, Any]) -> str:
    if is_credential_name(change.field):
        return f"{change.field} changed"  # its values are the credential, whichever version held them
    # Each value judged whole before it is cut (to MAX_VALUE_CHARS, an image's digest to 19): a stored
    # text an older gate judged may hold a token the current one drops, and its first characters cut
    # loose read as a word. The joined line is judged again as a whole (change_record).
    change = dataclasses.replace(change, before=_judged(change.before), after=_judged(change.after))
    if change.field == "health":
        return f"health {change.before or '(none)'} -> {change.after or '(none)'}{_reason(after)}"
    if change.field == "images":
        return _images(change.before, change.after)
    if change.field == "labels":
        old, new = set(_items(change.before)), set(_items(change.after))
        return "labels " + " ".join([*(f"+{x}" for x in sorted(new - old)), *(f"-{x}" for x in sorted(old - new))])
    return f"{change.field} {_short(change.before)} -> {_short(change.after)}"


def _judged(value: str) -> str:
    return redact_text(clean_text(value), raw=False)


def _images(before: str, after: str) -> str:
    """``image repo 2.3.0 -> 2.3.1`` for a tag or digest that moved; ``images +x -y`` for the rest."""
    old = {_repository(i): i for i in _items(before)}
    new = {_repository(i): i for i in _items(after)}
    parts = []
    for repository in [r for r in new if r in old and new[r] != old[r]]:
        parts.append(f"image {repository} {_tag(old[repository])} -> {_tag(new[repository])}")
    added = [new[r] for r in new if r not in old]
    removed = [old[r] for r in old if r not in new]
    if added or removed:
        parts.append("images " + " ".join([*(f"+{i}" for i in added), *(f"-{i}" for i in removed)]))
    return "; ".join(parts) or "images changed"


def _repository(image: str) -> str:
    name = image.split("@", 1)[0]
    head, _, tail = name.rpartition(":")
    return head if head and "/" not in tail else name


def _tag(image: str) -> str:
    if "@" in image:
        return image.split("@", 1)[1][:19]
    head, _, tail = image.rpartition(":")
    return tail if head and "/" not in tail else "latest"


def _items(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _short(value: str) -> str:
    if not value:
        return "(none)"
    return value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 3] + "..."


def rejudged(text: str, metadata: Mapping[str, Any]) -> tuple[str, dict[str, MetadataValue]] | None:
    """A stored record as the current gate would write it, or None when it would write it the same.

    Records written by an older gate may hold what the current one drops: the summary after its head
    (``Kind namespace/name``, identity, kept) and every payload string are judged again.
    """
    kind, namespace, name = KIND.of(metadata), NAMESPACE.of(metadata), NAME.of(metadata)
    head = f"{kind} {namespace + '/' if namespace else ''}{name}"
    if not text.startswith(head):
        head = ""
    summary = head + redact_text(clean_text(text[len(head) :]), raw=False)
    payload = {k: v for k, v in metadata.items() if k not in ("object", "content_hash")}
    judged = redact_metadata(payload, identity=(name, namespace))
    judged["object"] = OBJECT.of(metadata)
    if summary == text and all(judged.get(k) == v for k, v in payload.items()):
        return None
    judged["content_hash"] = _record_hash(summary, {k: v for k, v in judged.items() if k != "content_hash"})
    return summary, judged


def _record_hash(summary: str, metadata: Mapping[str, Any]) -> str:
    """A change record's content hash: its line and its payload (``content_hash`` itself left out)."""
    return hashlib.sha256(json.dumps([summary, metadata], sort_keys=True).encode()).hexdigest()
