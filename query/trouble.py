"""How a candidate meets a question about trouble: how troubled it is, and whether it says why in the
question's words.

Read by :mod:`kubevec.query.intent` from the payload alone: the health summary the controller wrote
(``inference/health.py``), the containers' reasons, and the object's latest Warning Event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from kubevec.core import fields
from kubevec.core.words import camel_words

#: Question words for the words of Kubernetes' reasons.
SYNONYMS: Final = {"memory": "oom", "crashing": "crash", "crashes": "crash", "pulling": "pull", "pulled": "pull"}
#: Question words that ask for the objects Warning Events were recorded for.
WARNED: Final = frozenset({"warning", "warnings", "warned"})


def health_of(metadata: Mapping[str, Any]) -> str:
    """The candidate's health, and ``degraded`` for one still progressing whose latest Warning Event says
    something failed: a claim no class provisions, a Deployment whose image is not found, an autoscaler
    that cannot read its metric stay "progressing" by their status, but the cluster said they are in trouble."""
    health = fields.HEALTH.of(metadata)
    return "degraded" if health == "progressing" and fields.WARNING_REASON.of(metadata) else health


def says_why(metadata: Mapping[str, Any], *, words: Iterable[str]) -> bool:
    """The question's ``words`` (stop words out) meet the candidate's reasons or message ("out of memory":
    ``OOMKilled``), its status's or its latest Warning Event's; or they ask for Warnings and it has one."""
    if fields.WARNING_REASON.of(metadata) and not WARNED.isdisjoint(words):
        return True  # "which Warning events were recorded": its latest one is what is asked
    said: list[str] = []
    reasons = [fields.HEALTH_REASON.of(metadata), *fields.CONTAINER_REASONS.of(metadata)]
    reasons += [fields.WARNING_REASON.of(metadata)]  # its latest Warning Event says why as well
    for item in [*reasons, fields.HEALTH_MESSAGE.of(metadata), fields.WARNING_MESSAGE.of(metadata)]:
        said += [w.lower() for w in camel_words(item)]
    stems = {w[:5] for w in said if len(w) >= 3}
    asked = {SYNONYMS.get(w, w)[:5] for w in words if len(w) >= 3}
    if not stems.isdisjoint(asked):
        return True
    # inside a reason's word: "scheduled" in Unschedulable, "image" in ImagePullBackOff
    return any(len(stem) == 5 and stem in word for stem in asked for word in said)
