"""A coarse health summary of an object, from its ``status``: what agents filter on, never what they embed.

``health`` is one of ``healthy``, ``progressing``, ``degraded``, ``unknown``; ``ready`` says whether
the object serves (all replicas available, pod ready, job complete, volume bound, node ready);
``phase`` is copied when the object has one; ``reason`` is the reason of the condition that decided
(a CamelCase word such as ``ProgressDeadlineExceeded`` or ``CrashLoopBackOff``); ``health_message``
its message, one bounded line through the credential rules (which quota refused a Pod, why an
image pull failed); for Pods, ``container_reasons`` (current and last: ``CrashLoopBackOff``,
``OOMKilled``), ``exit_codes`` and ``restarts``.

The summary goes into the document's metadata only: the text stays the same, so a change of health
re-uses the stored vector (no embedding), and a status update that leaves the summary equal leaves
the content hash equal, so nothing is written at all. Built-in workloads, pods, jobs, volume
claims, nodes and autoscalers are read by their own rules; any other object by its conditions as
Kubernetes and common operators use them (``Failed``/``Degraded``/``Stalled``, then
``Succeeded``/``Complete``, then ``Ready``/``Available``/``Healthy``...), else its ``phase``. An object without a status has no summary.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubevec.inference.redaction import REDACTED, redact_text

HEALTHY: Final = "healthy"
PROGRESSING: Final = "progressing"
DEGRADED: Final = "degraded"
UNKNOWN: Final = "unknown"
STATES: Final = (HEALTHY, PROGRESSING, DEGRADED, UNKNOWN)
MAX_REASON: Final = 64
#: Reasons of a false Ready condition that mean "not yet" rather than "broken" (custom resources).
_PENDING_REASON = re.compile(r"progress|pending|creat|reconcil|wait|provision|initiali|starting|updat", re.IGNORECASE)
_BAD_WAITING = re.compile(r"BackOff|Err|Invalid|Failed|Crash", re.IGNORECASE)
#: Reasons that mean broken even when they also sound like work in progress (``ReconcileError``).
_BAD_REASON = re.compile(r"err|fail|invalid|denied|backoff|crash|timeout|exceeded|forbidden", re.IGNORECASE)
_HEALTHY_PHASES: Final = frozenset(
    {"running", "ready", "active", "bound", "succeeded", "available", "healthy", "complete", "completed"}
)
_DEGRADED_PHASES: Final = frozenset({"failed", "error", "lost", "degraded", "unhealthy"})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Health:
    state: str
    ready: bool
    phase: str | None = None
    reason: str | None = None
    #: What the deciding condition (or container) says in words: which quota refused a Pod, why a pull failed.
    message: str | None = None
    #: Containers' current and last reasons (``CrashLoopBackOff``, ``OOMKilled``), exit codes and restarts.
    container_reasons: tuple[str, ...] = ()
    exit_codes: tuple[int, ...] = ()
    restarts: int = 0

    def metadata(self) -> dict[str, str | bool | int | list[str]]:
        out: dict[str, str | bool | int | list[str]] = {"health": self.state, "ready": self.ready}
        phase, reason = clean_word(self.phase), clean_word(self.reason)
        if phase:
            out["phase"] = phase
        if reason:
            out["health_reason"] = reason
        message = clean_message(self.message)
        if message:
            out["health_message"] = message
        reasons = [r for r in (clean_word(r) for r in self.container_reasons) if r]
        if reasons:
            out["container_reasons"] = list(dict.fromkeys(reasons))
        if self.exit_codes:
            out["exit_codes"] = [
                str(code) for code in sorted(set(self.exit_codes))
            ]  # strings: one list type everywhere
        if self.restarts:
            out["restarts"] = self.restarts
        return out


MAX_MESSAGE: Final = 240


def clean_message(value: str | None) -> str | None:
    """A condition's message as one bounded line, through the credential rules (it is free text a
    controller wrote, which may quote a command line or a URL with a password)."""
    if not value or not isinstance(value, str):
        return None
    # Judged whole, then flattened and cut: a credential the cut would halve ("https://deploy:Qz7ma",
    # a token whose prefix no pattern knows) no longer reads as one, and a message cut first (it was cut
    # at 960 characters, then whitespace collapsed) put a token's first characters in the line. Config
    # text keeps its lines while it is judged. The gate bounds its own cost (``bounds.cut_string``).
    judged = " ".join(redact_text(value).split())
    return _cut(judged, MAX_MESSAGE) or None


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, never ending in part of a redaction marker."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    start = cut.rfind(REDACTED[0])
    if start != -1 and REDACTED.startswith(cut[start:]) and cut[start:] != REDACTED:
        cut = cut[:start]
    return cut


#: What a phase or a reason is by API convention: a word or a short phrase (``CrashLoopBackOff``, ``In Progress``).
_WORDLIKE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*(?: [A-Za-z0-9_.-]+){0,5}")


def clean_word(value: str | None) -> str | None:
    """``value`` if it is a word or short phrase that no credential rule objects to, else None.

    Both are copied from ``status``, which any controller may fill with anything: a phase that holds a
    sentence, a URL or ``password=...`` is left out rather than stored (it would bypass the text's
    redaction, since metadata is not embedded text)."""
    if not value:
        return None
    if redact_text(value) != value:  # judged whole, before the cut: a token's first characters read as a word
        return None
    value = value[:MAX_REASON]
    return value if _WORDLIKE.fullmatch(value) else None


def health_of(obj: Mapping[str, Any]) -> Health | None:
    """The object's coarse health, or None when it has no status to judge by."""
    status = obj.get("status")
    if not isinstance(status, Mapping) or not status:
        return None
    kind = str(obj.get("kind", ""))
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    rule = _RULES.get((group, kind))
    raw_spec, raw_meta = obj.get("spec"), obj.get("metadata")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    if rule is None:
        return _generic(status, meta)
    return rule(status, spec, meta)


# -- conditions ----------------------------------------------------------------------------------


def _conditions(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    raw = status.get("conditions")
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return {}
    return {str(c.get("type")): c for c in raw if isinstance(c, Mapping) and c.get("type")}


def _is(condition: Mapping[str, Any] | None, value: str) -> bool:
    return condition is not None and str(condition.get("status")) == value


def _reason(condition: Mapping[str, Any] | None) -> str | None:
    if condition is None:
        return None
    reason = condition.get("reason")
    return str(reason) if isinstance(reason, str) and reason else None


def _said(condition: Mapping[str, Any] | None) -> str | None:
    """A condition's message, if it has one."""
    message = condition.get("message") if condition is not None else None
    return message if isinstance(message, str) and message.strip() else None


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _stale(status: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """The controller has not yet seen the latest spec (observedGeneration behind generation)."""
    observed, generation = status.get("observedGeneration"), meta.get("generation")
    return isinstance(observed, int) and isinstance(generation, int) and observed < generation


# -- kinds ---------------------------------------------------------------------------------------

Rule = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]], Health]


def _replicas(status: Mapping[str, Any], meta: Mapping[str, Any], *, desired: int, ready: int, updated: int) -> Health:
    conditions = _conditions(status)
    progressing, failure = conditions.get("Progressing"), conditions.get("ReplicaFailure")
    if _is(failure, "True"):
        return Health(
            state=DEGRADED, ready=ready >= desired, reason=_reason(failure) or "ReplicaFailure", message=_said(failure)
        )
    if _is(progressing, "False"):
        return Health(state=DEGRADED, ready=ready >= desired, reason=_reason(progressing), message=_said(progressing))
    if ready >= desired and updated >= desired and not _stale(status, meta):
        return Health(state=HEALTHY, ready=True)
    reason = _reason(progressing) if _is(progressing, "True") else None
    return Health(state=PROGRESSING, ready=ready >= desired and desired > 0, reason=reason or "ReplicasNotReady")


def _deployment(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    desired = _int(spec.get("replicas"), 1)
    available = _int(status.get("availableReplicas"))
    updated = _int(status.get("updatedReplicas"))
    return _replicas(status, meta, desired=desired, ready=available, updated=updated)


def _stateful_set(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    desired = _int(spec.get("replicas"), 1)
    ready = _int(status.get("readyReplicas"))
    current, update = status.get("currentRevision"), status.get("updateRevision")
    updated = desired if current == update else _int(status.get("updatedReplicas"))
    return _replicas(status, meta, desired=desired, ready=ready, updated=updated)


def _replica_set(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    desired = _int(spec.get("replicas"), 1)
    ready = _int(status.get("readyReplicas"))
    return _replicas(status, meta, desired=desired, ready=ready, updated=desired)


def _daemon_set(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    desired = _int(status.get("desiredNumberScheduled"))
    ready = _int(status.get("numberReady"))
    updated = _int(status.get("updatedNumberScheduled"), desired)
    return _replicas(status, meta, desired=desired, ready=ready, updated=updated)


def _pod(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    phase = str(status.get("phase") or "") or None
    containers = [
        c
        for key in ("initContainerStatuses", "containerStatuses")
        for c in _list(status.get(key))
        if isinstance(c, Mapping)
    ]
    waiting: list[tuple[str, str | None]] = []  # (reason, message) of containers waiting now
    last_words: list[str] = []  # what containers said as they last terminated (their termination message)
    reasons: list[str] = []
    exit_codes: list[int] = []
    restarts = 0
    for container in containers:
        restarts += _int(container.get("restartCount"))
        for key in ("state", "lastState"):
            state = container.get(key)
            if not isinstance(state, Mapping):
                continue
            for name in ("waiting", "terminated"):
                detail = state.get(name)
                if not isinstance(detail, Mapping):
                    continue
                reason = detail.get("reason")
                if isinstance(reason, str) and reason and reason != "Completed":
                    reasons.append(reason)
                code = detail.get("exitCode")
                if name == "terminated" and isinstance(code, int) and not isinstance(code, bool) and code != 0:
                    exit_codes.append(code)
                message = detail.get("message")
                if key == "state" and name == "waiting":
                    waiting.append((str(reason or ""), message if isinstance(message, str) else None))
                elif name == "terminated" and isinstance(message, str) and message.strip():
                    last_words.append(message)
    health = _pod_state(status, phase=phase, waiting=waiting)
    if health.reason == "CrashLoopBackOff" and last_words:
        # the kubelet's back-off line names only the container; its last words say why it crashes
        health = dataclasses.replace(health, message=last_words[0])
    return dataclasses.replace(
        health, container_reasons=tuple(reasons), exit_codes=tuple(exit_codes), restarts=restarts
    )


def _pod_state(status: Mapping[str, Any], *, phase: str | None, waiting: list[tuple[str, str | None]]) -> Health:
    conditions = _conditions(status)
    bad = next(((reason, message) for reason, message in waiting if _BAD_WAITING.search(reason)), None)
    if phase == "Succeeded":
        return Health(state=HEALTHY, ready=False, phase=phase, reason="Completed")
    if phase == "Failed":
        reason, message = status.get("reason"), status.get("message")
        return Health(
            state=DEGRADED,
            ready=False,
            phase=phase,
            reason=str(reason or "") or None,
            message=message if isinstance(message, str) else None,
        )
    if bad:
        return Health(state=DEGRADED, ready=False, phase=phase, reason=bad[0], message=bad[1])
    if phase == "Running" and _is(conditions.get("Ready"), "True"):
        return Health(state=HEALTHY, ready=True, phase=phase)
    if phase in ("Pending", "Running"):
        scheduled = conditions.get("PodScheduled")
        if _is(scheduled, "False"):
            # the scheduler tried and no node fits (a nodeSelector nothing matches, too little CPU): broken
            # until something changes; a Pod held by its scheduling gates waits on purpose
            return Health(
                state=DEGRADED if _reason(scheduled) == "Unschedulable" else PROGRESSING,
                ready=False,
                phase=phase,
                reason=_reason(scheduled),
                message=_said(scheduled),
            )
        reason = next((r for r, _ in waiting if r), None)
        ready = conditions.get("Ready")
        if reason is None and _is(ready, "False"):
            # running but not ready (a failing readiness probe): the kubelet's words say which containers
            return Health(state=PROGRESSING, ready=False, phase=phase, reason=_reason(ready), message=_said(ready))
        return Health(state=PROGRESSING, ready=False, phase=phase, reason=reason)
    return Health(state=UNKNOWN, ready=False, phase=phase)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _job(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    conditions = _conditions(status)
    if _is(conditions.get("Failed"), "True"):
        failed = conditions["Failed"]
        return Health(state=DEGRADED, ready=False, reason=_reason(failed) or "Failed", message=_said(failed))
    if _is(conditions.get("Complete"), "True"):
        return Health(state=HEALTHY, ready=True, reason="Complete")
    return Health(state=PROGRESSING, ready=False, reason="Running" if _int(status.get("active")) else None)


def _pvc(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    phase = str(status.get("phase") or "") or None
    if phase == "Bound":
        return Health(state=HEALTHY, ready=True, phase=phase)
    if phase == "Lost":
        return Health(state=DEGRADED, ready=False, phase=phase)
    if phase == "Pending":
        return Health(state=PROGRESSING, ready=False, phase=phase)
    return Health(state=UNKNOWN, ready=False, phase=phase)


def _node(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    ready = _conditions(status).get("Ready")
    if _is(ready, "True"):
        return Health(state=HEALTHY, ready=True)
    if _is(ready, "False"):
        return Health(state=DEGRADED, ready=False, reason=_reason(ready), message=_said(ready))
    return Health(state=UNKNOWN, ready=False, reason=_reason(ready))


def _disruption_budget(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    """A PodDisruptionBudget that allows no disruption blocks every drain of its Pods' nodes: it says why
    (``InsufficientPods``: fewer healthy Pods than it must keep)."""
    allowed = _conditions(status).get("DisruptionAllowed")
    if _is(allowed, "True"):
        return Health(state=HEALTHY, ready=True)
    if _is(allowed, "False"):
        return Health(state=DEGRADED, ready=False, reason=_reason(allowed), message=_said(allowed))
    return Health(state=UNKNOWN, ready=False)


def _autoscaler(status: Mapping[str, Any], spec: Mapping[str, Any], meta: Mapping[str, Any]) -> Health:
    """An HPA that cannot scale (``AbleToScale``) or cannot read its metrics (``ScalingActive``) says why."""
    conditions = _conditions(status)
    for kind in ("AbleToScale", "ScalingActive"):
        condition = conditions.get(kind)
        if _is(condition, "False"):
            reason = _reason(condition) or f"{kind}False"
            if kind == "ScalingActive" and reason == "ScalingDisabled":
                return Health(state=HEALTHY, ready=True, reason=reason)  # scaled to zero on purpose
            return Health(state=DEGRADED, ready=False, reason=reason, message=_said(condition))
    if conditions:
        limited = conditions.get("ScalingLimited")
        return Health(state=HEALTHY, ready=True, reason=_reason(limited) if _is(limited, "True") else None)
    return Health(state=PROGRESSING, ready=False)


#: Condition types that mean the object finished (``True``: done well, ``False``: failed), as Knative,
#: Tekton and Argo use ``Succeeded`` and batch-like resources ``Complete``.
_TERMINAL: Final = ("Succeeded", "Complete", "Completed")
#: Condition types that mean something is wrong when ``True`` (Flux ``Stalled``, ``Degraded``, ``Failed``).
_TROUBLE: Final = ("Failed", "Degraded", "Stalled", "Error", "ReconcileError")
#: Condition types that mean working when ``True`` (Knative/cert-manager ``Ready``, ``Available``, ``Healthy``).
_GOOD: Final = ("Ready", "Available", "Healthy", "Synced", "Reconciled", "Established", "Accepted", "Programmed")


def _generic(status: Mapping[str, Any], meta: Mapping[str, Any]) -> Health | None:
    """Any other resource, by its conditions as Kubernetes and common operators use them, else its ``phase``.

    In order: a trouble condition that is ``True`` (``Failed``, ``Degraded``, ``Stalled``); a terminal
    one (``Succeeded``: ``True`` healthy, ``False`` failed, ``Unknown`` running); the first of the
    "working" conditions (``Ready``, ``Available``, ``Healthy``...); then the ``phase``."""
    conditions = _conditions(status)
    phase = status.get("phase")
    phase = str(phase) if isinstance(phase, str) and phase else None
    for kind in _TROUBLE:
        trouble = conditions.get(kind)
        if _is(trouble, "True"):
            return Health(
                state=DEGRADED, ready=False, phase=phase, reason=_reason(trouble) or kind, message=_said(trouble)
            )
    reported = _reported(status, phase=phase)
    if reported is not None:
        return reported
    terminal = next((conditions[k] for k in _TERMINAL if k in conditions), None)
    if terminal is not None:
        reason = _reason(terminal)
        if _is(terminal, "True"):
            return Health(state=HEALTHY, ready=True, phase=phase, reason=reason)
        if _is(terminal, "False"):
            return Health(state=DEGRADED, ready=False, phase=phase, reason=reason or "Failed", message=_said(terminal))
        return Health(state=PROGRESSING, ready=False, phase=phase, reason=reason, message=_said(terminal))
    decisive = next((conditions[k] for k in _GOOD if k in conditions), None)
    if decisive is not None:
        reason = _reason(decisive)
        if _is(decisive, "True"):
            state = PROGRESSING if _stale(status, meta) else HEALTHY
            return Health(state=state, ready=True, phase=phase, reason=reason if state != HEALTHY else None)
        if _is(decisive, "False"):
            pending = reason is not None and _PENDING_REASON.search(reason) is not None
            pending = pending and _BAD_REASON.search(reason or "") is None
            return Health(
                state=PROGRESSING if pending else DEGRADED,
                ready=False,
                phase=phase,
                reason=reason,
                message=_said(decisive),
            )
        return Health(state=UNKNOWN, ready=False, phase=phase, reason=reason)
    if phase is not None:
        lowered = phase.lower()
        if lowered in _HEALTHY_PHASES:
            return Health(state=HEALTHY, ready=True, phase=phase)
        if lowered in _DEGRADED_PHASES:
            return Health(state=DEGRADED, ready=False, phase=phase)
        return Health(state=PROGRESSING, ready=False, phase=phase)
    if conditions:
        return Health(state=UNKNOWN, ready=False)
    return None


#: The words of an operator's own verdict in ``status.health.status`` (Argo CD's health vocabulary).
_REPORTED: Final = {
    "healthy": HEALTHY,
    "progressing": PROGRESSING,
    "suspended": PROGRESSING,
    "degraded": DEGRADED,
    "missing": DEGRADED,
    "unknown": UNKNOWN,
}


def _reported(status: Mapping[str, Any], *, phase: str | None) -> Health | None:
    """``status.health: {status, message}``, where an operator says what it thinks (Argo CD Applications).

    Not healthy: the word is the reason and the message says why. Healthy but ``status.sync.status``
    ``OutOfSync`` (what runs differs from git): healthy, with ``OutOfSync`` as the reason, which is
    what a GitOps question filters on."""
    health = status.get("health")
    word = health.get("status") if isinstance(health, Mapping) else None
    state = _REPORTED.get(word.lower()) if isinstance(word, str) else None
    if state is None or not isinstance(health, Mapping):
        return None
    message = health.get("message")
    said = str(message) if isinstance(message, str) and message else None
    if state != HEALTHY:
        return Health(state=state, ready=False, phase=phase, reason=str(word), message=said)
    sync = status.get("sync")
    synced = sync.get("status") if isinstance(sync, Mapping) else None
    reason = "OutOfSync" if isinstance(synced, str) and synced.lower() == "outofsync" else None
    return Health(state=HEALTHY, ready=True, phase=phase, reason=reason, message=said)


_RULES: Final[dict[tuple[str, str], Rule]] = {
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _stateful_set,
    ("apps", "DaemonSet"): _daemon_set,
    ("apps", "ReplicaSet"): _replica_set,
    ("", "Pod"): _pod,
    ("batch", "Job"): _job,
    ("", "PersistentVolumeClaim"): _pvc,
    ("", "Node"): _node,
    ("autoscaling", "HorizontalPodAutoscaler"): _autoscaler,
    ("policy", "PodDisruptionBudget"): _disruption_budget,
}
