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

Here: the :class:`Authorizer` and what it asks the API server. Beside it, one module per concern:
``views`` (what a view is), ``static_tokens`` (the token file), ``placements`` (what Kubernetes
callers are reviewed about) and ``review_budget`` (the reviews of all callers together).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Final, Protocol

from kubevec.backends.filters import Eq, Filter
from kubevec.core.errors import TokenRefused
from kubevec.inference.documents import CAPABILITIES, INSTANCES
from kubevec.query.limits import Caller
from kubevec.query.oidc import OutsideIdentities
from kubevec.query.placements import Placement, placement_of, visible_instances
from kubevec.query.rbac import RbacSnapshot
from kubevec.query.review_budget import ReviewBudget, ReviewThrottled
from kubevec.query.static_tokens import StaticToken, StaticTokenFile, digest, load_static_tokens
from kubevec.query.views import View, everything, nothing

#: The names callers import from here, each defined in the module of its concern.
__all__ = [
    "CREDENTIAL_ID",
    "Authorizer",
    "Identity",
    "Placement",
    "ReviewBudget",
    "ReviewThrottled",
    "Reviewer",
    "StaticToken",
    "StaticTokenFile",
    "View",
    "everything",
    "holder",
    "load_static_tokens",
    "nothing",
    "placement_of",
    "token_expiry",
    "visible_instances",
]

logger = logging.getLogger(__name__)

#: The non-resource URL whose readers may see capability documents (what ``kubectl explain`` reads).
OPENAPI_PATH: Final = "/openapi/v3"
#: A token the API server rejected is asked about again after this long (a fresh token may become valid).
NEGATIVE_TTL: Final = 5.0
#: At most this many SubjectAccessReviews in flight per caller.
REVIEW_CONCURRENCY: Final = 8
#: Callers (and tokens) remembered at once; the oldest go first.
MAX_CACHED: Final = 10_000


@dataclasses.dataclass(frozen=True, kw_only=True)
class Identity:
    """A Kubernetes user as TokenReview reports it, and as SubjectAccessReview is asked about it."""

    user: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


#: ``extra`` keys an outside identity carries into its reviews: who vouched for it, and for whom.
ISSUER_EXTRA: Final = "kubevec.io/issuer"
SUBJECT_EXTRA: Final = "kubevec.io/subject"
#: TokenReview's ``extra`` key naming the credential (a token's JTI), not who holds it: left out of the
#: identity so the next token of the same ServiceAccount (projected tokens rotate hourly) re-uses its decisions.
CREDENTIAL_ID: Final = "authentication.kubernetes.io/credential-id"


def holder(identity: Identity) -> Identity:
    """``identity`` without what names the credential: the key decisions are cached under."""
    if not any(key == CREDENTIAL_ID for key, _ in identity.extra):
        return identity
    return dataclasses.replace(identity, extra=tuple((k, v) for k, v in identity.extra if k != CREDENTIAL_ID))


def token_expiry(token: str) -> float | None:
    """A JWT's ``exp`` (Unix seconds), None for anything else: the token is not trusted for it, only bounded.

    The signature is the API server's to check (TokenReview); the expiry is read here so that a
    cached identity is never used past its token's own lifetime.
    """
    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) > 8192:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None


class Reviewer(Protocol):
    """TokenReview and SubjectAccessReview against the cluster (``kubevec.controller.kube.reviews`` has the real one)."""

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


class Authorizer:
    """Turns a bearer token into a :class:`View`, or None when the token is not accepted.

    ``placements`` lists where this cluster's instance documents live (read from the store).
    With ``rbac`` (the cluster's RBAC objects, read once per TTL for every caller), a Kubernetes
    caller costs one TokenReview and two SubjectAccessReviews (capabilities; cluster-wide list of
    everything), and its per-namespace rights are matched here; without it, one
    SubjectAccessReview per resource type and (namespace, resource) pair (``reviews`` mode).
    Decisions are kept per identity (a new token of a known identity costs a TokenReview only),
    never past the token's own expiry; ``budget`` bounds the reviews of all callers together.
    """

    def __init__(
        self,
        *,
        cluster: str,
        full_token: str | None = None,
        static: Sequence[StaticToken] | StaticTokenFile = (),
        reviewer: Reviewer | None = None,
        kubernetes_tokens: bool = True,
        outside: OutsideIdentities | None = None,
        placements: Callable[[], Awaitable[Iterable[Placement]]] | None = None,
        rbac: Callable[[], Awaitable[RbacSnapshot]] | None = None,
        budget: ReviewBudget | None = None,
        ttl: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if reviewer is not None and placements is None:
            raise ValueError("Kubernetes callers need the index's placements")
        if outside is not None and reviewer is None:
            raise ValueError("outside identities are decided by the cluster's RBAC: they need the reviewer")
        self.cluster = cluster
        self._full = digest(full_token) if full_token else None
        self._static: StaticTokenFile | dict[str, StaticToken] = (
            static if isinstance(static, StaticTokenFile) else {entry.digest: entry for entry in static}
        )
        self.reviewer = reviewer
        #: Whether Kubernetes tokens are accepted (TokenReview); the reviewer may serve outside identities alone.
        self.kubernetes_tokens = kubernetes_tokens
        self.outside = outside
        self._placements = placements
        self._rbac_source = rbac
        self.budget = budget
        self.ttl = ttl
        self._clock = clock
        self._wall = wall
        self._identities: dict[str, tuple[float, Identity | None]] = {}
        self._views: dict[Identity, tuple[float, View]] = {}
        self._static_views: dict[str, tuple[float, StaticToken, View]] = {}
        self._universe: tuple[float, frozenset[Placement]] | None = None
        self._rbac: tuple[float, RbacSnapshot] | None = None
        self._pending: dict[object, asyncio.Future[Any]] = {}
        #: Questions asked of the API server, by kind (read by the controller's metrics and the bench).
        self.asked: dict[str, int] = {"tokenreview": 0, "subjectaccessreview": 0, "rbac_read": 0}

    @property
    def required(self) -> bool:
        """Whether any way of authenticating is configured (else the endpoint is open, loopback only)."""
        return bool(self._full or self._static or self.reviewer or self.outside)  # a token file counts, empty too

    @property
    def static_file(self) -> StaticTokenFile | None:
        return self._static if isinstance(self._static, StaticTokenFile) else None

    @property
    def mode(self) -> str:
        """How Kubernetes callers are judged: ``rbac`` (rules matched here) or ``reviews`` (one per placement)."""
        return "rbac" if self._rbac_source is not None else "reviews"

    def _static_tokens(self) -> dict[str, StaticToken]:
        return self._static.current() if isinstance(self._static, StaticTokenFile) else self._static

    async def view_for(self, token: str | None) -> View | None:
        if not token:
            return None
        hashed = digest(token)
        if self._full is not None and hmac.compare_digest(hashed, self._full):
            return everything(Caller("token", "KUBEVEC_MCP_TOKEN"))
        static = self._static_tokens().get(hashed)
        if static is not None:
            return await self._static_view(static)
        if self.outside is not None and self.outside.claims_issuer(token) is not None:
            identity = await self._outside_identity(hashed, token)
            return None if identity is None else await self._view(identity)
        if self.reviewer is None or not self.kubernetes_tokens:
            return None
        identity = await self._identity(hashed, token)
        if identity is None:
            return None
        return await self._view(identity)

    # -- caches ------------------------------------------------------------------------------------

    async def _static_view(self, entry: StaticToken) -> View:
        if not entry.globs:
            return entry.view()
        cached = self._static_views.get(entry.digest)
        if cached is not None and cached[0] > self._clock() and cached[1] is entry:
            return cached[2]
        universe = await self._universe_now() if self._placements is not None else frozenset()
        view = entry.view(namespaces={p.namespace for p in universe if p.namespace})
        _remember(self._static_views, entry.digest, (self._clock() + self.ttl, entry, view))
        return view

    async def _identity(self, hashed: str, token: str) -> Identity | None:
        now = self._clock()
        cached = self._identities.get(hashed)
        if cached is not None and cached[0] > now:
            return cached[1]
        expiry = token_expiry(token)
        left = None if expiry is None else expiry - self._wall()
        if left is not None and left <= 0:
            logger.info("Refused an expired MCP token")
            _remember(self._identities, hashed, (now + NEGATIVE_TTL, None))
            return None
        reviewer = self.reviewer
        assert reviewer is not None

        async def review() -> Identity | None:
            if self.budget is not None:
                await self.budget.spend(1, what="a TokenReview")
            self.asked["tokenreview"] += 1
            return await reviewer.authenticate(token)

        found: Identity | None = await self._once(("token", hashed), review)
        identity = holder(found) if found is not None else None
        ttl = self.ttl if identity is not None else min(self.ttl, NEGATIVE_TTL)
        if left is not None:
            ttl = min(ttl, left)  # never past the token's own lifetime
        _remember(self._identities, hashed, (self._clock() + ttl, identity))
        if identity is None:
            logger.info("Refused an MCP token the API server did not accept")
        return identity

    async def _outside_identity(self, hashed: str, token: str) -> Identity | None:
        """The identity a token of an outside issuer proves, checked here (never past its ``exp``)."""
        now = self._clock()
        cached = self._identities.get(hashed)
        if cached is not None and cached[0] > now:
            return cached[1]
        assert self.outside is not None
        try:
            found = await self.outside.identify(token)  # KeysUnavailable: a 503, never an allow
        except TokenRefused as refused:
            logger.info("Refused an MCP token of an outside issuer reason=%s", refused.reason)
            _remember(self._identities, hashed, (now + NEGATIVE_TTL, None))
            return None
        identity = Identity(
            user=found.user,
            groups=found.groups,
            # keyed on (issuer, subject), and said to the API server with each review
            extra=((ISSUER_EXTRA, (found.issuer,)), (SUBJECT_EXTRA, (found.subject,))),
        )
        _remember(self._identities, hashed, (now + min(self.ttl, found.expires - self._wall()), identity))
        return identity

    async def _view(self, identity: Identity) -> View:
        cached = self._views.get(identity)
        if cached is not None and cached[0] > self._clock():
            return cached[1]
        asked_at = self._clock()
        view: View = await self._once(("view", identity), lambda: self._review(identity))
        # An RBAC edit shows within one ttl: the view lasts a ttl from when its answers were asked for, and
        # never past the RBAC snapshot it was decided from (itself a ttl from when its read began). Cached
        # for a ttl from when it was made, from a snapshot already almost a ttl old, an edit took two.
        expires = asked_at + self.ttl
        if self._rbac_source is not None and self._rbac is not None:
            expires = min(expires, self._rbac[0])
        _remember(self._views, identity, (expires, view))
        return view

    async def _universe_now(self) -> frozenset[Placement]:
        if self._universe is not None and self._universe[0] > self._clock():
            return self._universe[1]
        assert self._placements is not None
        placements = self._placements
        found: frozenset[Placement] = await self._once("universe", lambda: _frozen(placements()))
        self._universe = (self._clock() + self.ttl, found)
        return found

    async def _rbac_now(self) -> RbacSnapshot:
        if self._rbac is not None and self._rbac[0] > self._clock():
            return self._rbac[1]
        source = self._rbac_source
        assert source is not None

        began = self._clock()

        async def read() -> RbacSnapshot:
            self.asked["rbac_read"] += 1
            started = self._clock()
            snapshot = await source()
            logger.info(
                "Read the cluster's RBAC objects objects=%d seconds=%.2f", snapshot.objects, self._clock() - started
            )
            return snapshot

        found: RbacSnapshot = await self._once("rbac", read)
        self._rbac = (began + self.ttl, found)  # from when the read began: what it saw is at least that old
        return found

    async def _once(self, key: object, make: Callable[[], Awaitable[Any]]) -> Any:
        """One computation per key at a time: concurrent callers with the same key wait for the first."""
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

        mine = [0]  # this caller's questions (the global count also has other callers')

        async def may(**attributes: str) -> bool:
            async with limit:
                self.asked["subjectaccessreview"] += 1
                mine[0] += 1
                return await reviewer.allowed(identity, **attributes)

        # What this caller will ask, reserved before the first question (``reviews`` mode: an upper
        # bound, every placement; what was not asked goes back), so that whoever comes next sees the
        # whole debt ahead of it at once.
        planned = 2
        universe: frozenset[Placement] = frozenset()
        if self._rbac_source is None:
            universe = await self._universe_now()
            planned += len({p.resource for p in universe}) + sum(1 for p in universe if p.namespace is not None)
        if self.budget is not None:
            await self.budget.spend(planned, what=f"reviewing {identity.user}")
        try:
            return await self._decide(identity, may=may, universe=universe, started=started)
        finally:
            if self.budget is not None:
                self.budget.refund(planned - mine[0])

    async def _decide(
        self,
        identity: Identity,
        *,
        may: Callable[..., Awaitable[bool]],
        universe: frozenset[Placement],
        started: float,
    ) -> View:
        filters: dict[str, Filter | None] = {}
        if await may(verb="get", path=OPENAPI_PATH):
            filters[CAPABILITIES] = None
        if await may(verb="list", group="*", resource="*"):  # cluster-admin and the like: one question
            filters[INSTANCES] = Eq("cluster", self.cluster)
            return self._done(identity, filters, started, asked=2)
        universe = universe or await self._universe_now()
        resources = sorted({(p.group, p.plural, p.resource) for p in universe})
        if self._rbac_source is not None:
            grants = (await self._rbac_now()).grants(user=identity.user, groups=identity.groups)
            everywhere = {r for g, plural, r in resources if grants.allows(verb="list", group=g, resource=plural)}
            pairs = sorted(p for p in universe if p.namespace is not None and p.resource not in everywhere)
            answers = [
                grants.allows(verb="list", group=p.group, resource=p.plural, namespace=p.namespace) for p in pairs
            ]
            asked = 2
        else:
            cluster_wide = await asyncio.gather(*(may(verb="list", group=g, resource=r) for g, r, _ in resources))
            everywhere = {resource for (_, _, resource), ok in zip(resources, cluster_wide, strict=True) if ok}
            pairs = sorted(p for p in universe if p.namespace is not None and p.resource not in everywhere)
            answers = await asyncio.gather(
                *(may(verb="list", group=p.group, resource=p.plural, namespace=p.namespace or "") for p in pairs)
            )
            asked = 2 + len(resources) + len(pairs)
        per_namespace: dict[str, list[str]] = {}
        for placement, ok in zip(pairs, answers, strict=True):
            if ok and placement.namespace is not None:
                per_namespace.setdefault(placement.namespace, []).append(placement.resource)
        instances = visible_instances(cluster=self.cluster, everywhere=everywhere, per_namespace=per_namespace)
        if instances is not None:
            filters[INSTANCES] = instances
        return self._done(identity, filters, started, asked=asked)

    def _done(self, identity: Identity, filters: dict[str, Filter | None], started: float, *, asked: int) -> View:
        logger.info(
            "Reviewed an MCP caller's access user=%s mode=%s collections=%s reviews=%d seconds=%.2f",
            identity.user,
            self.mode,
            ",".join(sorted(filters)) or "none",
            asked,
            self._clock() - started,
        )
        return View(caller=Caller("user", identity.user), filters=filters)


async def _frozen(found: Awaitable[Iterable[Placement]]) -> frozenset[Placement]:
    return frozenset(await found)


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    cache.pop(key, None)
    cache[key] = value
    while len(cache) > MAX_CACHED:
        del cache[next(iter(cache))]
