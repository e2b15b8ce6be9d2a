"""What every kind family's summary shares: the policy, the bounds on the text, a few renderings.

A summariser turns one redacted object into the lines its document's text holds; each family of
kinds (:mod:`.workloads`, :mod:`.networking`, :mod:`.rbac`, :mod:`.config`, :mod:`.generic`) writes
its own, within these bounds, so that a huge object costs a bounded line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from kubevec.inference.redaction import Redacted

#: Labels written into the *text* (the payload's ``labels`` list always holds every label: filters are exact).
MAX_TEXT_LABELS: Final = 20
MAX_SPEC_FIELDS: Final = 24
MAX_VALUE_CHARS: Final = 80
MAX_LIST_ITEMS: Final = 6


@dataclasses.dataclass(frozen=True, kw_only=True)
class InstancePolicy:
    """What the SyncPolicy lets into instance documents (defaults: ConfigMap key names, no extra annotations)."""

    annotation_allowlist: tuple[str, ...] = ()
    configmap_keys: bool = True


#: A kind family's summary: the lines of text one redacted object gives, under the policy.
Summariser: TypeAlias = Callable[[Redacted, InstancePolicy], list[str]]


def label_selector(value: Any) -> str:
    """A LabelSelector in words: ``app=web, tier in (a, b)``; ``every Pod`` for ``{}``."""
    if not isinstance(value, Mapping):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((value.get("matchLabels") or {}).items())]
    for expression in value.get("matchExpressions") or []:
        if isinstance(expression, Mapping):
            values = ", ".join(map(str, expression.get("values") or []))
            parts.append(
                f"{expression.get('key')} {str(expression.get('operator', '')).lower()} ({values})".replace(" ()", "")
            )
    return ", ".join(parts) or "every Pod"


def short(value: str, *, limit: int) -> str:
    """``value`` on one line, whitespace collapsed, cut to ``limit`` characters with ``...``."""
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
