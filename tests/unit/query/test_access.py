"""Each MCP caller's view: Kubernetes RBAC (a fake reviewer here; the real one in tests/e2e), static
token scopes, and no leak through search, get, facets, related or resolve."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from kubevec.backends.filters import MAX_CHILDREN, MAX_VALUES, validate
from kubevec.core.errors import AccessConfigError, ReviewUnavailable
from kubevec.query.access import Authorizer, Identity
from kubevec.query.limits import Caller
from kubevec.query.placements import Placement, visible_instances
from kubevec.query.search import SearchService
from kubevec.query.static_tokens import StaticToken, load_static_tokens
from tests.unit.tenants import CLUSTER, ids, index


class FakeReviewer:
    """TokenReview and SubjectAccessReview from tables; counts every question."""

    def __init__(self, *, users: dict[str, str], rules: dict[str, set[tuple[str, str, str]]], openapi: set[str]):
        self.users = users  # token -> user
        self.rules = rules  # user -> {(namespace or "" for cluster-wide, group, plural)}
        self.openapi = openapi
        self.token_reviews = 0
        self.access_reviews = 0
        self.down = False

    async def authenticate(self, token: str) -> Identity | None:
        self.token_reviews += 1
        if self.down:
            raise ReviewUnavailable("tokenreviews: connection refused")
        user = self.users.get(token)
        return Identity(user=user, groups=("system:authenticated",)) if user else None

    async def allowed(
        self, identity: Identity, *, verb: str, group: str = "", resource: str = "", namespace: str = "", path: str = ""
    ) -> bool:
        self.access_reviews += 1
        await asyncio.sleep(0)
        if path:
            return identity.user in self.openapi
        rules = self.rules.get(identity.user, set())
        if ("", "*", "*") in rules:
            return True
        return (namespace, group, resource) in rules or ("", group, resource) in rules


def reviewer() -> FakeReviewer:
    return FakeReviewer(
        users={"tok-a": "agent-a", "tok-b": "agent-b", "tok-none": "nobody", "tok-admin": "admin"},
        rules={
            "agent-a": {("team-a", "apps", "deployments"), ("team-a", "", "configmaps")},
            "agent-b": {("team-b", "apps", "deployments"), ("team-b", "", "services"), ("", "", "configmaps")},
            "admin": {("", "*", "*")},
        },
        openapi={"agent-a", "agent-b", "admin"},
    )


def authorizer(service: SearchService, review: FakeReviewer, **kwargs: Any) -> Authorizer:
    return Authorizer(cluster=CLUSTER, reviewer=review, placements=lambda: service.placements(CLUSTER), **kwargs)


async def test_each_kubernetes_caller_sees_only_what_it_may_list() -> None:
    service, _ = await index()
    auth = authorizer(service, reviewer())
    a, b, none = [await auth.view_for(t) for t in ("tok-a", "tok-b", "tok-none")]
    assert a is not None
    assert b is not None
    assert none is not None
    seen_a = await ids(service, a, collection="instances", query="api settings")
    assert seen_a == {
        "prod/team-a/apps/v1/Deployment/team-a-api",
        "prod/team-a/core/v1/ConfigMap/team-a-settings",
    }  # not team-a's Service (not listable), nothing of team-b, cluster-scoped or the staging cluster
    seen_b = await ids(service, b, collection="instances", query="api settings")
    assert seen_b == {
        "prod/team-b/apps/v1/Deployment/team-b-api",
        "prod/team-b/core/v1/Service/team-b-svc",
        "prod/team-a/core/v1/ConfigMap/team-a-settings",  # configmaps cluster-wide
        "prod/team-b/core/v1/ConfigMap/team-b-settings",
    }
    assert await ids(service, none, collection="instances", query="api settings") == set()
    assert await ids(service, none, collection="instances", kind="Deployment") == set()
    assert await ids(service, none, collection="instances", keyword="api") == set()
    # Every path of search honours the view: filters only, keyword only, dense only, MMR.
    assert await ids(service, a, collection="instances", kind="Service") == set()
    assert await ids(service, a, collection="instances", keyword="svc") == set()
    assert await ids(service, a, collection="instances", query="svc", hybrid=False) <= seen_a
    assert await ids(service, a, collection="instances", query="svc", mmr=True) <= seen_a


async def test_no_count_facet_document_or_edge_reveals_a_hidden_object() -> None:
    service, _ = await index()
    auth = authorizer(service, reviewer())
    a, none = await auth.view_for("tok-a"), await auth.view_for("tok-none")
    assert a is not None
    assert none is not None
    assert await service.facets("instances", "namespace", view=a) == {"team-a": 2}
    assert await service.facets("instances", "kind", view=a) == {"ConfigMap": 1, "Deployment": 1}
    assert await service.facets("instances", "kind", view=none) == {}
    hidden = "prod/team-b/apps/v1/Deployment/team-b-api"
    assert await service.find_document(hidden, view=a) is None
    assert await service.find_document(hidden, view=None) is not None  # it exists
    assert (
        await service.find_document("prod/_cluster/rbac.authorization.k8s.io/v1/ClusterRole/secret-reader", view=a)
        is None
    )
    # "What uses Secret team-b/db-creds?" for a caller of team-a: nothing, as if nothing did.
    answer = await service.related("Secret/team-b/db-creds", direction="in", cluster=CLUSTER, view=a)
    assert answer.edges == ()
    own = await service.related("Secret/team-a/db-creds", direction="in", cluster=CLUSTER, view=a)
    assert {e.source.key for e in own.edges} == {"Deployment/team-a/team-a-api"}
    # The Service that selects the Deployment's pods is not listable for agent-a: no edge to it.
    out = await service.related("prod/team-a/apps/v1/Deployment/team-a-api", direction="both", view=a)
    assert "Service/team-a/team-a-svc" not in {e.neighbour.key for e in out.edges}
    unscoped = await service.related("prod/team-a/apps/v1/Deployment/team-a-api", direction="both")
    assert "Service/team-a/team-a-svc" in {e.neighbour.key for e in unscoped.edges}
    with pytest.raises(ValueError, match="No instance document"):
        await service.related(hidden, view=a)
    assert (await service.related("Secret/team-a/db-creds", direction="in", cluster=CLUSTER, view=none)).edges == ()


async def test_capabilities_follow_openapi_access_and_resolve_kind_too() -> None:
    service, _ = await index()
    review = reviewer()
    auth = authorizer(service, review)
    a, none = await auth.view_for("tok-a"), await auth.view_for("tok-none")
    assert a is not None
    assert none is not None
    assert await ids(service, a, collection="capabilities", query="tls") == {"certificates.cert-manager.io"}
    assert [k["id"] for k in await service.resolve_kind("Certificate", view=a)] == ["certificates.cert-manager.io"]
    assert await ids(service, none, collection="capabilities", query="tls") == set()
    assert await service.resolve_kind("Certificate", view=none) == []
    assert await service.facets("capabilities", "kind", view=none) == {}
    assert await service.find_document("certificates.cert-manager.io", view=none) is None


async def test_a_cluster_admin_costs_two_reviews_and_sees_this_cluster_only() -> None:
    service, _ = await index()
    review = reviewer()
    auth = authorizer(service, review)
    admin = await auth.view_for("tok-admin")
    assert admin is not None
    assert review.access_reviews == 2
    seen = await ids(service, admin, collection="instances", kind="Deployment")
    assert seen == {"prod/team-a/apps/v1/Deployment/team-a-api", "prod/team-b/apps/v1/Deployment/team-b-api"}


async def test_decisions_are_cached_per_caller_for_the_ttl_and_refused_tokens_briefly() -> None:
    service, _ = await index()
    review = reviewer()
    now = [0.0]
    auth = authorizer(service, review, ttl=30, clock=lambda: now[0])
    first = await asyncio.gather(*(auth.view_for("tok-a") for _ in range(5)))  # concurrent: reviewed once
    assert all(v == first[0] for v in first)
    asked = (review.token_reviews, review.access_reviews)
    assert review.token_reviews == 1
    await auth.view_for("tok-a")
    assert (review.token_reviews, review.access_reviews) == asked
    review.rules["agent-a"].add(("team-a", "", "services"))  # RBAC edited: seen after the TTL
    now[0] = 31
    later = await auth.view_for("tok-a")
    assert "prod/team-a/core/v1/Service/team-a-svc" in await ids(service, later, collection="instances", kind="Service")
    assert await auth.view_for("wrong") is None
    assert await auth.view_for("wrong") is None
    assert review.token_reviews == 3  # one more for the new TTL of tok-a, one for the wrong token
    now[0] = 40
    assert await auth.view_for("wrong") is None
    assert review.token_reviews == 4  # a refused token is asked about again after a few seconds


async def test_an_api_server_that_cannot_answer_refuses_rather_than_guesses() -> None:
    service, _ = await index()
    review = reviewer()
    review.down = True
    auth = authorizer(service, review)
    with pytest.raises(ReviewUnavailable):
        await auth.view_for("tok-a")
    review.down = False
    assert await auth.view_for("tok-a") is not None  # a failure is not cached


def test_a_view_over_hundreds_of_namespaces_stays_within_the_filter_limits() -> None:
    resources = [f"r{i}.example.com" for i in range(300)]
    per_namespace = {f"ns-{i}": resources[i % 7 :: 7] for i in range(700)}
    scope = visible_instances(cluster=CLUSTER, everywhere=resources[:5], per_namespace=per_namespace)
    assert scope is not None
    validate(scope)  # raises past MAX_DEPTH, MAX_CHILDREN or MAX_VALUES
    assert MAX_CHILDREN == 64
    assert MAX_VALUES == 256
    assert visible_instances(cluster=CLUSTER, everywhere=[], per_namespace={"a": []}) is None


async def test_the_universe_of_placements_is_read_once_per_ttl_for_all_callers() -> None:
    service, _ = await index()
    reads = []

    async def placements() -> Iterable[Placement]:
        reads.append(1)
        return await service.placements(CLUSTER)

    now = [0.0]
    review = reviewer()
    review.users["tok-late"] = "late-agent"
    auth = Authorizer(cluster=CLUSTER, reviewer=review, placements=placements, ttl=30, clock=lambda: now[0])
    await asyncio.gather(auth.view_for("tok-a"), auth.view_for("tok-b"), auth.view_for("tok-none"))
    assert len(reads) == 1
    now[0] = 29  # within the TTL: a caller reviewed now reuses it
    await auth.view_for("tok-late")
    assert len(reads) == 1
    now[0] = 31  # past it: read again, once, for the callers of the new TTL
    await asyncio.gather(auth.view_for("tok-a"), auth.view_for("tok-b"))
    assert len(reads) == 2


async def test_static_tokens_have_explicit_scopes(tmp_path: Path) -> None:
    service, _ = await index()
    secret = "s3cr3t-payments-agent-token"
    path = tmp_path / "tokens.yaml"
    path.write_text(
        "tokens:\n"
        f"  - {{name: team-a, token: {secret}, namespaces: [team-a], collections: [instances], clusters: [prod]}}\n"
        f"  - {{name: all, sha256: {hashlib.sha256(b'every-namespace-token-x').hexdigest()}, namespaces: ['*']}}\n"
    )
    auth = Authorizer(cluster=CLUSTER, static=load_static_tokens(path))
    assert auth.required
    team = await auth.view_for(secret)
    assert team is not None
    assert team.caller == Caller("static", "team-a")
    assert str(team.caller) == "static:team-a"
    seen = await ids(service, team, collection="instances", query="api")
    assert seen
    assert all(i.startswith("prod/team-a/") for i in seen)
    assert await ids(service, team, collection="capabilities", query="tls") == set()
    every = await auth.view_for("every-namespace-token-x")
    assert every is not None
    assert "prod/_cluster/rbac.authorization.k8s.io/v1/ClusterRole/secret-reader" in await ids(
        service, every, collection="instances", kind="ClusterRole"
    )
    assert await auth.view_for("not-a-token") is None
    assert await auth.view_for(None) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tokens: [{name: x, token: short, namespaces: [a]}]", "at least 16"),
        ("tokens: [{name: x, token: aaaaaaaaaaaaaaaaaaaa}]", "namespaces"),
        (
            "tokens: [{name: x, token: aaaaaaaaaaaaaaaaaaaa, namespaces: [a], collections: [pods]}]",
            "unknown collection pods",
        ),
        ("tokens: [{name: x, namespaces: [a]}]", "exactly one of token and sha256"),
        (
            "tokens: [{name: x, token: aaaaaaaaaaaaaaaaaaaa, namespaces: [a]}, {name: y, token: aaaaaaaaaaaaaaaaaaaa, namespaces: [b]}]",
            "y and x share a token",
        ),
        ("tokens: {", "Cannot read"),
    ],
)
def test_a_bad_token_file_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(text)
    with pytest.raises(AccessConfigError, match=message) as raised:
        load_static_tokens(path)
    assert "aaaaaaaaaaaaaaaaaaaa" not in str(raised.value)  # the token is never echoed


def test_over_http_a_tool_call_without_a_judged_caller_is_refused() -> None:
    """Fail closed: if the SDK ever stopped handing tools the HTTP request, nothing would be shown."""
    from mcp.server.mcpserver.exceptions import ToolError

    from kubevec.query.mcp import caller_view

    with pytest.raises(ToolError, match="Not authenticated"):
        caller_view(None, required=True)
    assert caller_view(None, required=False) is None  # stdio: the local user, everything


async def test_a_static_token_with_hundreds_of_namespaces_is_a_valid_filter() -> None:
    service, _ = await index()
    namespaces = [f"ns-{i}" for i in range(600)] + ["team-a"]
    entry = StaticToken(name="many", token="many-namespaces-token-x", namespaces=tuple(namespaces))
    view = entry.view()
    scope = view.filter("instances")
    assert scope is not None
    validate(scope)
    assert await ids(service, view, collection="instances", kind="Deployment") == {
        "prod/team-a/apps/v1/Deployment/team-a-api",
        "staging/team-a/apps/v1/Deployment/team-a-api",
    }
