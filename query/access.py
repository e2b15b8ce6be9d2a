"""Who may see what through the MCP endpoint: each caller's view of the index, as a portable filter.

Three kinds of caller, told apart by their bearer token:

- **Kubernetes identities**: any token the API server's TokenReview accepts (ServiceAccount
  tokens, projected tokens with kubevec's audience, OIDC tokens the API server trusts). A caller
  sees an instance document only where Kubernetes RBAC lets it ``list`` that resource: cluster-wide
  (cluster-scoped objects need that) or in the document's namespace, asked with
  SubjectAccessReview, and only this cluster's documents (another cluster's RBAC is not ours to
  judge). Capability documents describe resource *types*, which Kubernetes shows to whoever may
  read its OpenAPI documents (``kubectl explain``; every authenticated user by default): a caller
  sees them when SubjectAccessReview allows ``get`` on ``/openapi/v3``.
- **Static tokens** from a file (a mounted Secret), each with explicit scopes: namespaces
  (``*``: every namespace and the cluster-scoped objects), collections and clusters.
- **The single token** (``KUBEVEC_MCP_TOKEN``): everything, as before.

A view is a filter ANDed into every store read (search, keyword, facets, ``related``, ``get``),
so counts, facets and relationship edges are computed over visible documents only: a hidden
object is indistinguishable from one that does not exist.

Decisions are cached per caller for ``ttl`` seconds (RBAC edits show within that), tokens by
their sha256 (never the token itself). Which (namespace, resource) pairs exist is read from the
store once per ``ttl`` for all callers, and SubjectAccessReview is asked only about those: a pair
that appears meanwhile stays hidden until the next read (closed, not open).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from backends.filters import MAX_CHILDREN, MAX_VALUES, And, Eq, Filter, In, Or, matches
from inference.documents import CAPABILITIES, INSTANCES

logger = logging.getLogger(__name__)

COLLECTIONS: Final = (CAPABILITIES, INSTANCES)
ALL: Final = "*"
#: The non-resource URL whose readers may see capability documents (what ``kubectl explain`` reads).
OPENAPI_PATH: Final = "/openapi/v3"
#: A token the API server rejected is asked about again after this long (a fresh token may become valid).
NEGATIVE_TTL: Final = 5.0
#: At most this many SubjectAccessReviews in flight per caller.
REVIEW_CONCURRENCY: Final = 8
#: Callers (and tokens) remembered at once; the oldest go first.
MAX_CACHED: Final = 10_000


class AccessConfigError(ValueError):
    """The static token file is unusable; the message names the file and the entry."""


class ReviewUnavailable(RuntimeError):
    """The API server could not answer a TokenReview or SubjectAccessReview: refuse, do not guess."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Identity:
    """A Kubernetes user as TokenReview reports it, and as SubjectAccessReview is asked about it."""

    user: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


class Reviewer(Protocol):
    """TokenReview and SubjectAccessReview against the cluster (``controller.reviews`` has the real one)."""

    async def authenticate(self, token: str) -> Identity | None:
        """The token's identity, None when the API server does not accept it; :class:`ReviewUnavailable` on errors."""
        ...

    async def allowed(
        self,
        identity: Identity,
        *,
        verb: str,
        group: str = "",
        resource: str = "",
        namespace: str = "",
        path: str = "",
    ) -> bool:
        """SubjectAccessReview: resource attributes, or the non-resource ``path`` when one is given."""
        ...


@dataclasses.dataclass(frozen=True, kw_only=True)
class View:
    """What one caller may read: per collection nothing, everything (filter None) or what a filter matches."""

    caller: str
    filters: Mapping[str, Filter | None]

    def sees(self, collection: str) -> bool:
        return collection in self.filters

    def filter(self, collection: str) -> Filter | None:
        return self.filters.get(collection)

    def restrict(self, collection: str, conditions: Filter | None) -> Filter | None:
        """``conditions`` AND this view, flattened so the caller's own filter keeps its depth budget."""
        scope = self.filter(collection)
        if scope is None:
            return conditions
        if conditions is None:
            return scope
        left = conditions.filters if isinstance(conditions, And) else (conditions,)
        right = scope.filters if isinstance(scope, And) else (scope,)
        return And((*left, *right))

    def allows(self, collection: str, *, metadata: Mapping[str, Any], text: str = "") -> bool:
        if not self.sees(collection):
            return False
        scope = self.filter(collection)
        return scope is None or matches(scope, text=text, metadata=metadata)


def everything(caller: str) -> View:
    return View(caller=caller, filters=dict.fromkeys(COLLECTIONS))


def nothing(caller: str) -> View:
    return View(caller=caller, filters={})


# -- static tokens ---------------------------------------------------------------------------------


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

    def view(self) -> View:
        caller = f"static:{self.name}"
        parts: list[Filter] = []
        if ALL not in self.clusters:
            parts.append(_in("cluster", self.clusters))
        scoped = [*parts]
        if ALL not in self.namespaces:
            scoped.append(
                _any([_in("namespace", chunk) for chunk in _chunks(sorted(set(self.namespaces)), MAX_VALUES)])
            )
        filters: dict[str, Filter | None] = {}
        for collection in self.collections:
            chosen = scoped if collection == INSTANCES else parts
            filters[collection] = _all(chosen)
        return View(caller=caller, filters=filters)


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


# -- Kubernetes callers ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, order=True)
class Placement:
    """Where documents of one resource live: a namespace (None: cluster-scoped) and the resource."""

    namespace: str | None
    group: str  # "" for the core group, as RBAC spells it
    resource: str  # plural.group, the payload's ``resource``

    @property
    def plural(self) -> str:
        return self.resource.split(".", 1)[0]


def placement_of(metadata: Mapping[str, Any]) -> Placement | None:
    resource, group = metadata.get("resource"), metadata.get("group")
    if not isinstance(resource, str) or not isinstance(group, str):
        return None
    namespace = metadata.get("namespace")
    return Placement(
        namespace=namespace if isinstance(namespace, str) and namespace else None,
        group="" if group == "core" else group,
        resource=resource,
    )


def visible_instances(
    *, cluster: str, everywhere: Iterable[str], per_namespace: Mapping[str, Iterable[str]]
) -> Filter | None:
    """The filter for resources listable cluster-wide plus (namespace, resources) pairs; None: nothing.

    Namespaces allowed the same resources share one clause, and long lists are split to the
    filter's limits (256 values, 64 children), so a view over hundreds of namespaces stays valid.
    """
    clauses: list[Filter] = [_in("resource", chunk) for chunk in _chunks(sorted(set(everywhere)), MAX_VALUES)]
    by_resources: dict[tuple[str, ...], list[str]] = {}
    for namespace, resources in per_namespace.items():
        wanted = tuple(sorted(set(resources) - set(everywhere)))
        if wanted:
            by_resources.setdefault(wanted, []).append(namespace)
    for resources, namespaces in sorted(by_resources.items()):
        for resource_chunk in _chunks(list(resources), MAX_VALUES):
            for namespace_chunk in _chunks(sorted(namespaces), MAX_VALUES):
                clauses.append(And((_in("namespace", namespace_chunk), _in("resource", resource_chunk))))
    if not clauses:
        return None
    return And((Eq("cluster", cluster), _any(clauses)))


class Authorizer:
    """Turns a bearer token into a :class:`View`, or None when the token is not accepted.

    ``placements`` lists where this cluster's instance documents live (read from the store).
    """

    def __init__(
        self,
        *,
        cluster: str,
        full_token: str | None = None,
        static: Sequence[StaticToken] = (),
        reviewer: Reviewer | None = None,
        placements: Callable[[], Awaitable[Iterable[Placement]]] | None = None,
        ttl: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if reviewer is not None and placements is None:
            raise ValueError("Kubernetes callers need the index's placements")
        self.cluster = cluster
        self._full = digest(full_token) if full_token else None
        self._static = {entry.digest: entry.view() for entry in static}
        self.reviewer = reviewer
        self._placements = placements
        self.ttl = ttl
        self._clock = clock
        self._identities: dict[str, tuple[float, Identity | None]] = {}
        self._views: dict[Identity, tuple[float, View]] = {}
        self._universe: tuple[float, frozenset[Placement]] | None = None
        self._pending: dict[object, asyncio.Future[Any]] = {}

    @property
    def required(self) -> bool:
        """Whether any way of authenticating is configured (else the endpoint is open, loopback only)."""
        return bool(self._full or self._static or self.reviewer)

    async def view_for(self, token: str | None) -> View | None:
        if not token:
            return None
        hashed = digest(token)
        if self._full is not None and hmac.compare_digest(hashed, self._full):
            return everything("token")
        static = self._static.get(hashed)
        if static is not None:
            return static
        if self.reviewer is None:
            return None
        identity = await self._identity(hashed, token)
        if identity is None:
            return None
        return await self._view(identity)

    # -- caches ------------------------------------------------------------------------------------

    async def _identity(self, hashed: str, token: str) -> Identity | None:
        now = self._clock()
        cached = self._identities.get(hashed)
        if cached is not None and cached[0] > now:
            return cached[1]
        reviewer = self.reviewer
        assert reviewer is not None
        identity: Identity | None = await self._once(("token", hashed), lambda: reviewer.authenticate(token))
        ttl = self.ttl if identity is not None else min(self.ttl, NEGATIVE_TTL)
        _remember(self._identities, hashed, (self._clock() + ttl, identity))
        if identity is None:
            logger.info("Refused an MCP token the API server did not accept")
        return identity

    async def _view(self, identity: Identity) -> View:
        cached = self._views.get(identity)
        if cached is not None and cached[0] > self._clock():
            return cached[1]
        view: View = await self._once(("view", identity), lambda: self._review(identity))
        _remember(self._views, identity, (self._clock() + self.ttl, view))
        return view

    async def _universe_now(self) -> frozenset[Placement]:
        if self._universe is not None and self._universe[0] > self._clock():
            return self._universe[1]
        assert self._placements is not None
        placements = self._placements
        found: frozenset[Placement] = await self._once("universe", lambda: _frozen(placements()))
        self._universe = (self._clock() + self.ttl, found)
        return found

    async def _once(self, key: object, make: Callable[[], Awaitable[Any]]) -> Any:
        """One computation per key at a time: concurrent callers with the same token wait for the first."""
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            result = await make()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it, nobody else needs to
            raise
        else:
            future.set_result(result)
            return result
        finally:
            del self._pending[key]

    # -- the review --------------------------------------------------------------------------------

    async def _review(self, identity: Identity) -> View:
        reviewer = self.reviewer
        assert reviewer is not None
        started = self._clock()
        limit = asyncio.Semaphore(REVIEW_CONCURRENCY)

        async def may(**attributes: str) -> bool:
            async with limit:
                return await reviewer.allowed(identity, **attributes)

        filters: dict[str, Filter | None] = {}
        if await may(verb="get", path=OPENAPI_PATH):
            filters[CAPABILITIES] = None
        if await may(verb="list", group="*", resource="*"):  # cluster-admin and the like: one question
            filters[INSTANCES] = Eq("cluster", self.cluster)
            return self._done(identity, filters, started, asked=2)
        universe = await self._universe_now()
        resources = sorted({(p.group, p.plural, p.resource) for p in universe})
        cluster_wide = await asyncio.gather(*(may(verb="list", group=g, resource=r) for g, r, _ in resources))
        everywhere = {resource for (_, _, resource), ok in zip(resources, cluster_wide, strict=True) if ok}
        pairs = sorted(p for p in universe if p.namespace is not None and p.resource not in everywhere)
        answers = await asyncio.gather(
            *(may(verb="list", group=p.group, resource=p.plural, namespace=p.namespace or "") for p in pairs)
        )
        per_namespace: dict[str, list[str]] = {}
        for placement, ok in zip(pairs, answers, strict=True):
            if ok and placement.namespace is not None:
                per_namespace.setdefault(placement.namespace, []).append(placement.resource)
        instances = visible_instances(cluster=self.cluster, everywhere=everywhere, per_namespace=per_namespace)
        if instances is not None:
            filters[INSTANCES] = instances
        return self._done(identity, filters, started, asked=2 + len(resources) + len(pairs))

    def _done(self, identity: Identity, filters: dict[str, Filter | None], started: float, *, asked: int) -> View:
        logger.info(
            "Reviewed an MCP caller's access user=%s collections=%s reviews=%d seconds=%.2f",
            identity.user,
            ",".join(sorted(filters)) or "none",
            asked,
            self._clock() - started,
        )
        return View(caller=identity.user, filters=filters)


async def _frozen(found: Awaitable[Iterable[Placement]]) -> frozenset[Placement]:
    return frozenset(await found)


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    cache.pop(key, None)
    cache[key] = value
    while len(cache) > MAX_CACHED:
        del cache[next(iter(cache))]


def _in(field: str, values: Sequence[str]) -> Filter:
    return Eq(field, values[0]) if len(values) == 1 else In(field, tuple(values))


def _all(parts: Sequence[Filter]) -> Filter | None:
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def _any(clauses: Sequence[Filter]) -> Filter:
    """OR of clauses, nested in groups of 64 (the filter's child limit)."""
    while len(clauses) > MAX_CHILDREN:
        clauses = [_any(list(chunk)) for chunk in _chunks(list(clauses), MAX_CHILDREN)]
    return clauses[0] if len(clauses) == 1 else Or(tuple(clauses))


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
