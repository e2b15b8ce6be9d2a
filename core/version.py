"""The running version of kubevec, for ``--version``, metrics, traces and the MCP server's info: one place."""

from __future__ import annotations

import functools
import importlib.metadata


@functools.cache
def kubevec_version() -> str:
    """The installed distribution's version; ``unknown`` when run from a tree that is not installed."""
    try:
        return importlib.metadata.version("kubevec")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
