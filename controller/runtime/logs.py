"""Log hygiene: identical warnings and errors once per interval, with a count of what was held back.

Output is text lines or, with ``KUBEVEC_LOG_FORMAT=json``, one JSON object per line (``time``,
``level``, ``logger``, ``message``, and kopf's ``k8s_ref`` for lines about one object). kopf's
"Handler ... succeeded." line for every event (20 a second under churn) is DEBUG, not INFO.

While the API server is down, kopf retries every watch and logs each attempt; the resync, the
probe and urllib3 add their own lines. A :class:`RepeatFilter` on the output handler lets the first
line of a kind through, holds back repeats for ``interval`` seconds, and then lets one through
again as ``... (+41 similar in 60s)``. Two lines are similar when they differ only in URLs and
numbers (kopf's per-resource watch URLs, attempt counters, ports, durations), from the same logger
at the same level.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Final

from kubevec.inference.bounds import MAX_STRING_CHARS
from kubevec.inference.redaction import redact_text

DEFAULT_INTERVAL: Final = 60.0
_URLS = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|(?<=GET |PUT )/\S+")
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


class RepeatFilter(logging.Filter):
    """Pass WARNING+ records once per ``interval`` per (logger, level, message shape); INFO and below pass."""

    def __init__(self, *, interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()  # kopf, urllib3 and worker threads log concurrently
        self._seen: dict[tuple[str, int, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.levelno, _NUMBERS.sub("#", _URLS.sub("<url>", record.getMessage())))
        now = self._clock()
        with self._lock:
            first, held = self._seen.get(key, (None, 0))
            if first is not None and now - first < self.interval:
                self._seen[key] = (first, held + 1)
                return False
            self._seen[key] = (now, 0)
            if len(self._seen) > 10_000:  # bounded: forget the oldest shapes
                for stale in sorted(self._seen, key=lambda k: self._seen[k][0])[:5_000]:
                    del self._seen[stale]
        if held:
            record.msg = f"{record.getMessage()} (+{held} similar in {self.interval:.0f}s)"
            record.args = None
        return True


class WatchRestartFilter(logging.Filter):
    """kopf's "410 Gone, restarting the watch" lines, lifted from DEBUG to one INFO line per interval.

    Attached to kopf's private watching logger by :mod:`kubevec.controller.kopf_private` (its name is
    kopf's private API).

    A 410 means the stored resource version was compacted away (after an outage, or a quiet
    resource after a few minutes): kopf re-lists and carries on. Operators want to see that it
    happened without a line per resource; everything else from this logger keeps ``level``.
    """

    def __init__(self, *, level: int, interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.level = level
        self.interval = interval
        self._clock = clock
        self._last: float | None = None
        self._held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith("Restarting the watch-stream"):
            return record.levelno >= self.level
        now = self._clock()
        if self._last is not None and now - self._last < self.interval:
            self._held += 1
            return False
        more = f" (and {self._held} more in {self.interval:.0f}s)" if self._held else ""
        self._last, self._held = now, 0
        resource = message.removeprefix("Restarting the watch-stream for ").rstrip(".")
        record.msg = f"Restarted a watch after 410 Gone (resource version compacted) resource={resource}{more}"
        record.args = None
        record.levelno, record.levelname = logging.INFO, "INFO"
        return record.levelno >= self.level


class HandlerSuccessFilter(logging.Filter):
    """kopf's per-event "Handler 'observe_instance' succeeded." lines, from INFO down to DEBUG.

    Every watch event runs our handlers, so at INFO they are one line per event: noise that hides
    what matters. Failures keep their level.
    """

    def __init__(self, *, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO and record.getMessage().endswith(" succeeded."):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return record.levelno >= self.level


TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s %(message)s"


#: The longest message a log line carries; the rest is cut, with a count (a caller's 1 MB id or query
#: is not one 1 MB line).
MAX_MESSAGE: Final = 2000


class ClipFilter(logging.Filter):
    """Cut every message to ``limit`` characters, saying how much was left out, and pass it through the
    value redactor: a credential inside an error, an id or a caller's query never reaches a log line
    (the same deny-by-default rules as documents: generated-looking values, tokens, key blocks)."""

    def __init__(self, *, limit: int = MAX_MESSAGE) -> None:
        super().__init__()
        self.limit = limit

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_text(message, raw=False)  # whole, then cut: the gate bounds its own cost (bounds.cut_string)
        if len(clean) > self.limit or len(message) > MAX_STRING_CHARS:
            clean = f"{clean[: self.limit]}...(+{len(message) - self.limit} chars)"
        if clean != message:
            record.msg = clean
            record.args = None
        return True


def formatter(format: str) -> logging.Formatter:
    """Text lines, or JSON objects by python-json-logger (already kopf's own dependency)."""
    if format == "json":
        from pythonjsonlogger.core import RESERVED_ATTRS
        from pythonjsonlogger.json import JsonFormatter

        return JsonFormatter(
            TEXT_FORMAT,
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            timestamp=False,
            # kopf's object loggers pass their OperatorSettings (queues inside: not copyable, and no log
            # reader's business) and a skip flag with every record: left out, as are other objects.
            reserved_attrs=[*RESERVED_ATTRS, "taskName", "settings", "k8s_skip"],
            json_default=_json_default,
        )
    return logging.Formatter(TEXT_FORMAT)


def _json_default(value: object) -> str:
    """An extra a record carries that JSON cannot hold, as its type's name (never its contents)."""
    return f"<{type(value).__name__}>"


def install(*, level: str, format: str = "text", interval: float = DEFAULT_INTERVAL) -> None:
    """Root logging for the CLI: one stream handler with the repeat filter, noisy libraries quieted."""
    logging.basicConfig(level=level.upper(), format=TEXT_FORMAT)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter(format))
        handler.addFilter(ClipFilter())
        handler.addFilter(RepeatFilter(interval=interval))
    objects = logging.getLogger("kopf.objects")
    objects.setLevel(logging.DEBUG)  # the filter decides: success lines count as DEBUG
    objects.addFilter(HandlerSuccessFilter(level=logging.getLogger().getEffectiveLevel()))
    # libraries that log their internals at INFO, or signed requests at DEBUG (botocore)
    for noisy in ("httpx", "httpcore", "chromadb", "botocore", "boto3", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # what agents are answered, every caller's mixed together: sse-starlette logs each chunk of every MCP
    # answer at DEBUG, and the MCP SDK's DEBUG lines carry request ids and payload fragments
    for answers in ("sse_starlette", "mcp"):
        logging.getLogger(answers).setLevel(logging.INFO)
