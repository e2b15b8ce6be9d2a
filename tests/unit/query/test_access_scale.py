"""Access v2: decisions per identity, token expiry, local RBAC, the shared review budget, the token
file that follows its Secret, and per-caller limits (the real API server is in tests/e2e)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from kubevec.query.access import (
    CREDENTIAL_ID,
    Authorizer,
    Identity,
    Placement,
    ReviewBudget,
    ReviewThrottled,
    StaticTokenFile,
    load_static_tokens,
    token_expiry,
)
from kubevec.query.rbac import RbacSnapshot
from tests.unit.tenants import CLUSTER, ids, index

RBAC = "rbac.authorization.k8s.io"


def jwt(**claims: Any) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2lnbmF0dXJl"


def rule(groups: list[str], resources: list[str], verbs: list[str], **more: Any) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs, **more}


def binding(name: str, role: str, subjects: list[dict[str, str]], *, namespace: str | None = None) -> dict[str, Any]:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    role_kind = "ClusterRole" if role.startswith("cluster:") else "Role"
    return {
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role.removeprefix("cluster:")},
        "subjects": subjects,
    }


def sa(namespace: str, name: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def snapshot(*, more_bindings: tuple[dict[str, Any], ...] = ()) -> RbacSnapshot:
    return RbacSnapshot(
        cluster_roles=[
            {"metadata": {"name": "view-deploys"}, "rules": [rule(["apps"], ["deployments"], ["get", "list"])]},
            {"metadata": {"name": "everything"}, "rules": [rule(["*"], ["*"], ["*"])]},
            {"metadata": {"name": "named-only"}, "rules": [rule([""], ["services"], ["list"], resourceNames=["web"])]},
            {"metadata": {"name": "explain"}, "rules": [{"nonResourceURLs": ["/openapi/*"], "verbs": ["get"]}]},
            {"metadata": {"name": "watch-only"}, "rules": [rule([""], ["configmaps"], ["watch"])]},
        ],
        cluster_role_bindings=[
            binding("admins", "cluster:everything", [{"kind": "Group", "name": "platform"}]),
            binding("explainers", "cluster:explain", [{"kind": "Group", "name": "system:authenticated"}]),
            *more_bindings,
        ],
        roles=[
            {"metadata": {"name": "cm", "namespace": "team-a"}, "rules": [rule([""], ["configmaps"], ["list"])]},
        ],
        role_bindings=[
            binding("deploys", "cluster:view-deploys", [sa("team-a", "agent")], namespace="team-a"),
            binding("cm", "cm", [{"kind": "ServiceAccount", "name": "agent"}], namespace="team-a"),  # ns from binding
            binding("named", "cluster:named-only", [sa("team-a", "agent")], namespace="team-b"),
            binding("watch", "cluster:watch-only", [sa("team-a", "agent")], namespace="team-b"),
            binding("cm", "cm", [{"kind": "User", "name": "alice"}], namespace="team-b"),  # no such Role there
        ],
    )


def test_local_rbac_matches_the_kubernetes_rules() -> None:
    rbac = snapshot()
    agent = rbac.grants(user="system:serviceaccount:team-a:agent", groups=["system:authenticated"])
    assert agent.allows(verb="list", group="apps", resource="deployments", namespace="team-a")
    assert agent.allows(verb="list", group="", resource="configmaps", namespace="team-a")  # a Role, SA ns defaulted
    assert not agent.allows(verb="list", group="apps", resource="deployments", namespace="team-b")
    assert not agent.allows(verb="list", group="apps", resource="deployments")  # not cluster-wide
    assert not agent.allows(verb="list", group="", resource="services", namespace="team-b")  # names only: no list
    assert not agent.allows(verb="list", group="", resource="configmaps", namespace="team-b")  # watch is not list
    assert not agent.allows(verb="list", group="apps", resource="replicasets", namespace="team-a")
    assert agent.allows_path(verb="get", path="/openapi/v3")
    assert not agent.allows_path(verb="get", path="/metrics")
    platform = rbac.grants(user="bob", groups=["platform"])
    assert platform.allows(verb="list", group="x.io", resource="widgets")
    assert not rbac.grants(user="alice", groups=[]).allows(
        verb="list", group="", resource="configmaps", namespace="team-b"
    )
    assert rbac.grants(user="root", groups=["system:masters"]).allows(verb="list", group="a", resource="b")
    assert rbac.grants(user="system:serviceaccount:team-b:agent", groups=[]).namespaces == {}


class CountingReviewer:
    """TokenReview from a table of tokens (with a credential id per token, as the API server gives);
    SubjectAccessReview allows only /openapi/v3; counts both."""

    def __init__(self, users: dict[str, str]) -> None:
        self.users = users
        self.token_reviews = 0
        self.access_reviews = 0

    async def authenticate(self, token: str) -> Identity | None:
        self.token_reviews += 1
        await asyncio.sleep(0)
        user = self.users.get(token)
        if user is None:
            return None
        return Identity(
            user=user,
            groups=("system:authenticated",),
            extra=((CREDENTIAL_ID, (f"JTI={token}",)), ("authentication.kubernetes.io/pod-name", ("agent-0",))),
        )

    async def allowed(self, identity: Identity, *, verb: str, path: str = "", **_: str) -> bool:
        self.access_reviews += 1
        await asyncio.sleep(0)
        return bool(path)


def placements(namespaces: int, resources: int) -> list[Placement]:
    out = [Placement(namespace=f"team-{n}", group="apps", resource="deployments.apps") for n in range(namespaces)]
    out += [Placement(namespace="team-a", group="", resource="configmaps")]
    out += [
        Placement(namespace=f"team-{n}", group="x.io", resource=f"r{r}.x.io")
        for n in range(namespaces)
        for r in range(resources)
    ]
    return out


async def test_local_rbac_costs_two_reviews_however_many_placements_and_a_new_token_none() -> None:
    service, _ = await index()
    review = CountingReviewer({"t1": "system:serviceaccount:team-a:agent", "t2": "system:serviceaccount:team-a:agent"})
    reads = [0]

    async def rbac() -> RbacSnapshot:
        reads[0] += 1
        return snapshot()

    auth = Authorizer(cluster=CLUSTER, reviewer=review, placements=lambda: service.placements(CLUSTER), rbac=rbac)
    assert auth.mode == "rbac"
    view = await auth.view_for("t1")
    assert view is not None
    assert (review.token_reviews, review.access_reviews, reads[0]) == (1, 2, 1)
    seen = await ids(service, view, collection="instances", query="api")
    assert seen
    assert {i.split("/")[1] for i in seen} == {"team-a"}
    assert {i.split("/")[4] for i in seen} == {"Deployment", "ConfigMap"}
    # a second token of the same ServiceAccount (another credential id): one TokenReview, no SubjectAccessReview
    again = await auth.view_for("t2")
    assert again == view
    assert (review.token_reviews, review.access_reviews, reads[0]) == (2, 2, 1)

    big = Authorizer(
        cluster=CLUSTER,
        reviewer=review,
        placements=lambda: asyncio.sleep(0, result=placements(50, 20)),
        rbac=rbac,
    )
    before = review.access_reviews
    assert await big.view_for("t1") is not None
    assert review.access_reviews - before == 2  # 1,051 placements: still two


async def test_reviews_mode_asks_per_placement_within_the_budget_and_is_refused_past_it() -> None:
    review = CountingReviewer({"t1": "a", "t2": "b", "t3": "c"})
    now = [0.0]
    budget = ReviewBudget(rate=1000, burst=200, max_wait=0.5, clock=lambda: now[0])
    auth = Authorizer(
        cluster=CLUSTER,
        reviewer=review,
        placements=lambda: asyncio.sleep(0, result=placements(5, 2)),
        budget=budget,
        clock=lambda: now[0],
    )
    assert auth.mode == "reviews"
    assert await auth.view_for("t1") is not None
    assert review.access_reviews == 2 + 4 + 16  # openapi, all, 4 resources, 16 (namespace, resource) pairs
    many = Authorizer(
        cluster=CLUSTER,
        reviewer=review,
        placements=lambda: asyncio.sleep(0, result=placements(50, 20)),
        budget=budget,
        clock=lambda: now[0],
    )
    now[0] = 100.0  # the bucket is full again (the clock stands still from here: no refill)
    assert await many.view_for("t2") is not None  # 1,000+ reviews: its own cost is paced, not refused
    with pytest.raises(ReviewThrottled) as throttled:
        await auth.view_for("t3")  # 0.8 s of debt ahead of it: more than the 0.5 s it may wait
    # its TokenReview, 2 coarse reviews, 22 resources and 1,051 pairs, less the burst of 200, at 1,000/s
    assert throttled.value.retry_after == pytest.approx((1 + 2 + 22 + 1051 - 200) / 1000)


async def test_the_budget_paces_a_callers_own_cost_and_refuses_whoever_would_queue_behind_it() -> None:
    now = [0.0]
    budget = ReviewBudget(rate=100, burst=5, max_wait=0.1, clock=lambda: now[0])
    await budget.spend(5, what="x")  # the burst: no wait
    loop = asyncio.get_running_loop()
    started = loop.time()
    await budget.spend(30, what="x")  # its own cost is paced (0.3 s), not refused
    assert loop.time() - started >= 0.25
    with pytest.raises(ReviewThrottled) as refused:
        await budget.spend(1, what="x")  # 0.3 s of others' debt ahead: more than it may wait
    assert refused.value.retry_after == pytest.approx(0.3)
    now[0] = 10.0
    await budget.spend(5, what="x")  # refilled
    assert budget.spent == 40


async def test_an_expired_token_is_refused_on_its_next_call_however_fresh_its_review() -> None:
    wall = [1_000_000.0]
    mono = [0.0]
    token = jwt(sub="system:serviceaccount:team-a:agent", exp=1_000_010)
    review = CountingReviewer({token: "system:serviceaccount:team-a:agent"})
    service, _ = await index()
    auth = Authorizer(
        cluster=CLUSTER,
        reviewer=review,
        placements=lambda: service.placements(CLUSTER),
        ttl=30,
        clock=lambda: mono[0],
        wall=lambda: wall[0],
    )
    assert token_expiry(token) == 1_000_010
    assert token_expiry("opaque-token") is None
    assert token_expiry("a.!!!.c") is None
    assert await auth.view_for(token) is not None
    wall[0] += 11
    mono[0] += 11  # within the TTL (30 s), past the token's exp (10 s)
    assert await auth.view_for(token) is None
    assert review.token_reviews == 1  # refused here: the API server is not asked about an expired token


async def test_the_token_file_follows_its_secret(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    service, _ = await index()
    path = tmp_path / "tokens.yaml"
    path.write_text(
        "tokens:\n"
        "  - {name: a, token: token-for-team-a-0001, namespaces: [team-a]}\n"
        "  - {name: teams, token: token-for-all-teams-01, namespaces: ['team-*']}\n"
    )
    now = [0.0]
    source = StaticTokenFile(path, clock=lambda: now[0])
    auth = Authorizer(
        cluster=CLUSTER, static=source, placements=lambda: service.placements(CLUSTER), clock=lambda: now[0]
    )
    assert await auth.view_for("token-for-team-a-0001") is not None
    teams = await auth.view_for("token-for-all-teams-01")
    assert teams is not None
    seen = await ids(service, teams, collection="instances", kind="Deployment")
    assert {i.split("/")[1] for i in seen} == {"team-a", "team-b"}  # the glob matched both

    path.write_text("tokens:\n  - {name: teams, token: token-for-all-teams-01, namespaces: ['team-b']}\n")
    os.utime(path, ns=(1, 1))
    now[0] = 2.0
    assert await auth.view_for("token-for-team-a-0001") is None  # removed from the file: refused at once
    narrowed = await auth.view_for("token-for-all-teams-01")
    assert {i.split("/")[1] for i in await ids(service, narrowed, collection="instances", kind="Deployment")} == {
        "team-b"
    }

    path.write_text("tokens:\n  - {name: teams, token: token-for-all-teams-01, namespaces: ['team-.*']}\n")
    os.utime(path, ns=(2, 2))
    now[0] = 4.0
    assert await auth.view_for("token-for-all-teams-01") == narrowed  # the last good set stays
    assert source.reload_errors == 1
    assert "can match no namespace" in caplog.text
    assert "token-for-all" not in caplog.text


@pytest.mark.parametrize("entry", ["''", "Team-A", "team_a", "team-.*", "^team", "a" * 64])
def test_a_namespace_entry_that_can_match_nothing_is_refused(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(f"tokens: [{{name: x, token: aaaaaaaaaaaaaaaaaaaa, namespaces: [{entry}]}}]")
    with pytest.raises(ValueError, match="can match no namespace"):
        load_static_tokens(path)


async def test_a_glob_that_matches_no_namespace_yet_shows_no_instance() -> None:
    service, _ = await index()
    path_entries = [
        e for e in load_static_tokens_text("tokens: [{name: x, token: aaaaaaaaaaaaaaaaaaaa, namespaces: ['ops-*']}]")
    ]
    auth = Authorizer(cluster=CLUSTER, static=path_entries, placements=lambda: service.placements(CLUSTER))
    view = await auth.view_for("aaaaaaaaaaaaaaaaaaaa")
    assert view is not None
    assert not view.sees("instances")
    assert view.sees("capabilities")


def load_static_tokens_text(text: str) -> list[Any]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.yaml"
        path.write_text(text)
        return load_static_tokens(path)


def test_resource_names_of_the_empty_name_allow_a_list_as_kubernetes_does() -> None:
    """``resourceNames: [""]`` matches a request without a name (Kubernetes' ResourceNameMatches): the
    only false denies against the API server in 8,851 pairs."""
    rbac = RbacSnapshot(
        cluster_roles=[
            {"metadata": {"name": "empty-name"}, "rules": [rule([""], ["services"], ["list"], resourceNames=[""])]},
            {"metadata": {"name": "some-names"}, "rules": [rule([""], ["pods"], ["list"], resourceNames=["a", ""])]},
            {"metadata": {"name": "named"}, "rules": [rule([""], ["secrets"], ["list"], resourceNames=["db"])]},
        ],
        cluster_role_bindings=[
            binding(name, f"cluster:{name}", [{"kind": "User", "name": "carol"}])
            for name in ("empty-name", "some-names", "named")
        ],
        roles=[],
        role_bindings=[],
    )
    carol = rbac.grants(user="carol", groups=[])
    assert carol.allows(verb="list", group="", resource="services")
    assert carol.allows(verb="list", group="", resource="pods")
    assert not carol.allows(verb="list", group="", resource="secrets")


async def test_an_rbac_edit_shows_within_one_ttl() -> None:
    """A view was cached for a ttl from when it was made, from a snapshot up to a ttl old: an edit took up
    to two (57.5 s at a 30 s ttl). Now a view never outlives the snapshot it was decided from."""
    service, _ = await index()
    review = CountingReviewer({"early": "system:serviceaccount:team-a:agent", "late": "bob"})
    now = [0.0]
    bob_is_admin = [True]

    async def rbac() -> RbacSnapshot:
        admin = binding("bob", "cluster:everything", [{"kind": "User", "name": "bob"}])
        return snapshot(more_bindings=(admin,) if bob_is_admin[0] else ())

    auth = Authorizer(
        cluster=CLUSTER,
        reviewer=review,
        placements=lambda: service.placements(CLUSTER),
        rbac=rbac,
        ttl=30,
        clock=lambda: now[0],
    )
    assert await auth.view_for("early") is not None  # the snapshot is read at 0
    now[0] = 29.0
    bob = await auth.view_for("late")  # decided from the 29 s old snapshot
    assert bob is not None
    assert bob.sees("instances")
    admin_view = bob
    bob_is_admin[0] = False  # the edit, at 29.5
    now[0] = 29.5
    assert await auth.view_for("late") == admin_view  # within the ttl of the snapshot: still cached
    now[0] = 31.0  # past the snapshot's ttl: bob's view goes with it (it was cached until 59 before)
    after = await auth.view_for("late")
    assert after is not None
    assert after != admin_view
    assert not after.sees("instances")
