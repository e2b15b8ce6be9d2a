"""Static tokens: a file of bearer tokens (a mounted Secret), each with explicit scopes, read again when it changes.

Each entry names namespaces (``*``: every namespace and the cluster-scoped objects; globs such as
``team-*`` match the namespaces in the index), collections and clusters; see :class:`StaticToken`.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from kubevec.backends.filters import MAX_VALUES, Filter, all_of
from kubevec.core.errors import AccessConfigError
from kubevec.inference.documents import INSTANCES
from kubevec.query.limits import Caller
from kubevec.query.views import COLLECTIONS, View, any_filter, chunks, in_values

logger = logging.getLogger(__name__)

ALL: Final = "*"
#: A namespace name (DNS-1123 label) in which ``*`` and ``?`` may stand for characters: anything else
#: in a token file's ``namespaces`` can match no namespace and is refused.
NAMESPACE_PATTERN: Final = re.compile(r"[a-z0-9*?]([-a-z0-9*?]{0,61}[a-z0-9*?])?")


class StaticToken(BaseModel):
    """One entry of the static token file: a token (or its sha256) and what it may see."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=128, description="who holds it (logged; the token never is)")
    token: str | None = Field(default=None, min_length=16, description="the bearer token itself")
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$", description="or the sha256 of it, hex")
    namespaces: tuple[str, ...] = Field(
        min_length=1, description="namespaces whose objects it sees; '*': all, cluster-scoped objects too"
    )
    collections: tuple[str, ...] = Field(default=COLLECTIONS, min_length=1)
    clusters: tuple[str, ...] = Field(default=(ALL,), min_length=1, description="clusters' documents; '*': all")

    @field_validator("namespaces")
    @classmethod
    def _matchable_namespaces(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [name for name in value if name != ALL and not NAMESPACE_PATTERN.fullmatch(name)]
        if bad:
            raise ValueError(
                f"{', '.join(repr(b) for b in bad)} can match no namespace: use names or globs of "
                "lowercase letters, digits, '-', '*' and '?' (at most 63 characters), or '*' alone for all"
            )
        return value

    @field_validator("collections")
    @classmethod
    def _known_collections(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(COLLECTIONS))
        if unknown:
            raise ValueError(f"unknown collection {', '.join(unknown)}; use {' and/or '.join(COLLECTIONS)}")
        return value

    @model_validator(mode="after")
    def _one_secret(self) -> StaticToken:
        if (self.token is None) == (self.sha256 is None):
            raise ValueError("give exactly one of token and sha256")
        return self

    @property
    def digest(self) -> str:
        return self.sha256 or digest(self.token or "")

    @property
    def globs(self) -> bool:
        """Whether a namespace entry is a pattern, so the view depends on which namespaces exist."""
        return ALL not in self.namespaces and any(_is_glob(name) for name in self.namespaces)

    def view(self, *, namespaces: Iterable[str] = ()) -> View:
        """The token's view; patterns (``team-*``) are matched against ``namespaces``, those in the index."""
        caller = Caller("static", self.name)
        parts: list[Filter] = []
        if ALL not in self.clusters:
            parts.append(in_values("cluster", self.clusters))
        scoped = [*parts]
        instances = True
        if ALL not in self.namespaces:
            patterns = [name for name in self.namespaces if _is_glob(name)]
            chosen = {name for name in self.namespaces if not _is_glob(name)}
            chosen |= {ns for ns in namespaces if any(fnmatch.fnmatchcase(ns, p) for p in patterns)}
            if chosen:
                scoped.append(
                    any_filter([in_values("namespace", chunk) for chunk in chunks(sorted(chosen), MAX_VALUES)])
                )
            else:
                instances = False  # only patterns, and nothing matches them yet: no instance at all
        filters: dict[str, Filter | None] = {}
        for collection in self.collections:
            if collection == INSTANCES and not instances:
                continue
            filters[collection] = all_of(*(scoped if collection == INSTANCES else parts))
        return View(caller=caller, filters=filters, clusters=None if ALL in self.clusters else frozenset(self.clusters))


class StaticTokens(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: list[StaticToken]


def load_static_tokens(path: Path) -> list[StaticToken]:
    """The token file (YAML or JSON: ``{tokens: [{name, token|sha256, namespaces, collections, clusters}]}``)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise AccessConfigError(f"Cannot read the MCP token file {path}: {exc}") from exc
    try:
        tokens = StaticTokens.model_validate(data).tokens
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)
        )
        raise AccessConfigError(f"Invalid MCP token file {path}: {problems}") from None
    seen: dict[str, str] = {}
    for entry in tokens:
        if entry.digest in seen:
            raise AccessConfigError(
                f"Invalid MCP token file {path}: {entry.name} and {seen[entry.digest]} share a token"
            )
        seen[entry.digest] = entry.name
    return tokens


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _is_glob(name: str) -> bool:
    return "*" in name or "?" in name


class StaticTokenFile:
    """The static token file, read again whenever it changes (a mounted Secret updated by the kubelet).

    The file's identity (inode, size, mtime of what the path resolves to; the kubelet swaps a
    symlink) is looked at no more than once per ``check_seconds``. A new file that is unusable is
    logged as an error and counted, and the last good set stays: a typo never opens or closes
    everything at once. A token removed from a good file is refused from the next request on.
    """

    def __init__(self, path: Path, *, check_seconds: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.check_seconds = check_seconds
        self._clock = clock
        self._signature = self._stat()
        self.tokens: dict[str, StaticToken] = {entry.digest: entry for entry in load_static_tokens(path)}
        self._checked = clock()
        self.reloads = 0
        self.reload_errors = 0

    def _stat(self) -> tuple[int, int, int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)

    def current(self) -> dict[str, StaticToken]:
        now = self._clock()
        if now - self._checked < self.check_seconds:
            return self.tokens
        self._checked = now
        signature = self._stat()
        if signature == self._signature:
            return self.tokens
        self._signature = signature
        try:
            tokens = load_static_tokens(self.path)
        except AccessConfigError as exc:
            self.reload_errors += 1
            logger.error("Kept the last good MCP token file tokens=%d error=%s", len(self.tokens), exc)
            return self.tokens
        self.tokens = {entry.digest: entry for entry in tokens}
        self.reloads += 1
        logger.info("Reloaded the MCP token file path=%s tokens=%d", self.path, len(self.tokens))
        return self.tokens
