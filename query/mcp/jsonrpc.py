"""JSON-RPC details both transports need: request ids, the one error builder, clipped echoes."""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Final

logger = logging.getLogger(__name__)


def request_ids(text: str) -> list[str | int]:
    """The ids of the JSON-RPC requests in a POST body (one message or a batch); [] if it is not JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    messages = data if isinstance(data, list) else [data]
    return [
        m["id"]
        for m in messages
        if isinstance(m, dict)
        and "method" in m
        and isinstance(m.get("id"), str | int)
        and not isinstance(m["id"], bool)
    ]


def echoable(id: str | int | None) -> str | int | None:
    """An id to answer with: a caller's 1 MB id is not sent back (the error says what it was, clipped)."""
    return id if id is None or len(repr(id)) <= 200 else None


def rpc_error(id: str | int | None, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": INVALID_REQUEST, "message": message}}


def clip(text: str, limit: int = 200) -> str:
    """At most ``limit`` characters of something a caller sent, for a log line."""
    return text if len(text) <= limit else f"{text[:limit]}...(+{len(text) - limit} chars)"


#: Deeper JSON-RPC messages are answered with an error before any parser sees them (the SDK's
#: parser recurses per level; a valid request is nowhere near this deep).
MAX_MESSAGE_DEPTH: Final = 64
INVALID_REQUEST: Final = -32600
_ID_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"\s*:|"(?:[^"\\]|\\.)*"|[\[\]{}]|-?\d+')


def request_id(line: str) -> str | int | None:
    """The top-level ``"id"`` of a JSON-RPC message, found without parsing it (it may be hostile)."""
    depth = 0
    want = False
    for match in _ID_TOKENS.finditer(line):
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
        elif want:
            value = json.loads(token)
            return value if isinstance(value, str | int) else None
        elif depth == 1 and token.endswith(":") and json.loads(token[:-1].rstrip()) == "id":
            want = True
    return None
