"""Outside identities through the Authorizer (issue 53): a token of a configured issuer is checked here,
its user and groups decided by the cluster's RBAC like any Kubernetes user's, beside Kubernetes and static
tokens; a refused one is a 401, keys that cannot be fetched a 503, never an allow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from kubevec.core.errors import ConfigError, KeysUnavailable
from kubevec.query.access import ISSUER_EXTRA, Authorizer, Identity
from kubevec.query.oidc import ClaimMapping, Issuer, OutsideIdentities, issuers_of, read_issuers
from kubevec.query.rbac import RbacSnapshot
from tests.doubles.oidc import AUDIENCE, ISSUER, NOW, Clock, Provider
from tests.unit.query.test_access import reviewer
from tests.unit.query.test_access_scale import CountingReviewer, snapshot
from tests.unit.tenants import CLUSTER, ids, index


def outside(provider: Provider, clock: Clock) -> OutsideIdentities:
    issuer = Issuer(
        url=ISSUER,
        audiences=(AUDIENCE,),
        username=ClaimMapping(claim="preferred_username", prefix=""),
        groups=ClaimMapping(claim="groups", prefix="oidc:"),
    )
    return OutsideIdentities(issuers=[issuer], clock=clock, transport=httpx.MockTransport(provider.handler))


async def setup(**kwargs: Any) -> tuple[Any, Authorizer, Provider, Any]:
    service, _ = await index()
    provider, clock = Provider(), Clock()
    review = reviewer()
    # the outside user agent-a's rights are the fake cluster's for agent-a; a group binding for oidc:sre
    review.rules["oidc:sre"] = {("team-b", "apps", "deployments")}
    auth = Authorizer(
        cluster=CLUSTER,
        reviewer=review,
        outside=outside(provider, clock),
        placements=lambda: service.placements(CLUSTER),
        wall=clock,
        **kwargs,
    )
    return service, auth, provider, review


async def test_an_outside_user_sees_what_the_clusters_rbac_lets_that_user_list() -> None:
    service, auth, provider, review = await setup()
    view = await auth.view_for(provider.token(preferred_username="agent-a"))
    assert view is not None
    assert view.caller.name == "agent-a"
    assert await ids(service, view, collection="instances", query="api settings") == {
        "prod/team-a/apps/v1/Deployment/team-a-api",
        "prod/team-a/core/v1/ConfigMap/team-a-settings",
    }
    assert review.token_reviews == 0  # the token never went to the API server


async def test_a_user_bound_to_nothing_sees_nothing_and_groups_from_the_token_decide_too() -> None:
    service, auth, provider, _ = await setup()
    nobody = await auth.view_for(provider.token(preferred_username="stranger"))
    assert nobody is not None
    assert await ids(service, nobody, collection="instances", kind="Deployment") == set()


async def test_groups_from_the_token_are_asked_about_as_groups() -> None:
    seen: list[Identity] = []
    _, auth, provider, review = await setup()
    allowed = review.allowed

    async def recording(identity: Identity, **kwargs: Any) -> bool:
        seen.append(identity)
        return await allowed(identity, **kwargs)

    review.allowed = recording  # type: ignore[method-assign]
    await auth.view_for(provider.token(preferred_username="carol", groups=["sre"]))
    assert seen
    identity = seen[0]
    assert identity.user == "carol"
    assert identity.groups == ("oidc:sre", "system:authenticated")
    assert (ISSUER_EXTRA, (ISSUER,)) in identity.extra


async def test_a_refused_token_is_a_401_and_kubernetes_tokens_still_work_beside() -> None:
    _, auth, provider, review = await setup()
    assert await auth.view_for(provider.token(preferred_username="agent-a", aud="elsewhere")) is None
    assert auth.outside is not None
    assert auth.outside.refused["audience"] == 1
    assert await auth.view_for("tok-a") is not None  # a Kubernetes token: TokenReview as before
    assert review.token_reviews == 1


async def test_without_kubernetes_tokens_only_outside_ones_are_accepted() -> None:
    _, auth, provider, review = await setup(kubernetes_tokens=False)
    assert await auth.view_for("tok-a") is None
    assert review.token_reviews == 0
    assert await auth.view_for(provider.token(preferred_username="agent-a")) is not None


async def test_keys_that_cannot_be_fetched_answer_unavailable_never_allow() -> None:
    _, auth, provider, _ = await setup()
    provider.down = True
    with pytest.raises(KeysUnavailable):
        await auth.view_for(provider.token(preferred_username="agent-a"))


async def test_an_identity_is_not_used_past_its_tokens_expiry() -> None:
    _, auth, provider, _ = await setup(ttl=3600)
    token = provider.token(preferred_username="agent-a", exp=NOW + 60)
    assert await auth.view_for(token) is not None
    assert auth.outside is not None
    auth.outside._clock = lambda: NOW + 120  # type: ignore[method-assign]
    auth._wall = lambda: NOW + 120
    auth._identities.clear()
    assert await auth.view_for(token) is None


def test_outside_identities_need_the_clusters_rbac() -> None:
    with pytest.raises(ValueError, match="RBAC"):
        Authorizer(cluster=CLUSTER, outside=outside(Provider(), Clock()))


AUTHN = """
apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://idp.example.com/realms/platform
    audiences: [kubevec]
    audienceMatchPolicy: MatchAny
  claimMappings:
    username: {claim: email, prefix: ""}
    groups: {claim: groups, prefix: "oidc:"}
- issuer:
    url: https://login.microsoftonline.com/tenant/v2.0
    discoveryURL: https://login.microsoftonline.com/tenant/v2.0/.well-known/openid-configuration
    audiences: [api://kubevec]
  claimMappings:
    username: {claim: sub, prefix: "entra:"}
"""


def test_the_api_servers_authentication_configuration_is_read_as_it_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "authn.yaml"
    path.write_text(AUTHN)
    first, second = read_issuers(path)
    assert first.url == ISSUER
    assert first.audiences == ("kubevec",)
    assert first.username == ClaimMapping(claim="email", prefix="")
    assert first.groups == ClaimMapping(claim="groups", prefix="oidc:")
    assert second.username.prefix == "entra:"
    assert second.groups is None
    assert second.discovery_url is not None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"claimValidationRules": [{"expression": "claims.hd == 'example.com'"}]}, "claimValidationRules"),
        ({"claimMappings": {"username": {"expression": "claims.sub"}}}, "expression"),
        ({"claimMappings": {}}, "claim is required"),
        ({"issuer": {"url": "http://idp.example.com", "audiences": ["a"]}}, "https"),
        ({"issuer": {"url": ISSUER, "audiences": []}}, "audience"),
        ({"issuer": {"url": ISSUER, "audiences": ["a"], "audienceMatchPolicy": "MatchAll"}}, "MatchAny"),
        ({"claimMappings": {"username": {"claim": "sub", "prefix": ""}, "extra": [{"key": "a"}]}}, "extra"),
    ],
)
def test_what_kubevec_cannot_honour_is_refused_with_the_field_named(change: dict[str, Any], message: str) -> None:
    entry: dict[str, Any] = {
        "issuer": {"url": ISSUER, "audiences": ["kubevec"]},
        "claimMappings": {"username": {"claim": "sub", "prefix": ""}},
        **change,
    }
    with pytest.raises(ConfigError, match=message):
        issuers_of({"kind": "AuthenticationConfiguration", "jwt": [entry]})


async def test_in_rbac_mode_a_new_outside_identity_costs_two_reviews_and_its_groups_match_bindings() -> None:
    """Local RBAC matches the mapped user and groups exactly as a Kubernetes user's (the ``platform`` group's
    ClusterRoleBinding here), with the two SubjectAccessReviews every new identity costs, and none again."""
    service, _ = await index()
    provider, clock = Provider(), Clock()
    review = CountingReviewer({})

    async def rbac() -> RbacSnapshot:
        return snapshot()

    auth = Authorizer(
        cluster=CLUSTER,
        reviewer=review,
        outside=OutsideIdentities(
            issuers=[
                Issuer(
                    url=ISSUER,
                    audiences=(AUDIENCE,),
                    username=ClaimMapping(claim="preferred_username"),
                    groups=ClaimMapping(claim="groups"),
                )
            ],
            clock=clock,
            transport=httpx.MockTransport(provider.handler),
        ),
        placements=lambda: service.placements(CLUSTER),
        rbac=rbac,
        wall=clock,
    )
    admin = await auth.view_for(provider.token(preferred_username="dana", groups=["platform"]))
    assert admin is not None
    assert (review.token_reviews, review.access_reviews) == (0, 2)
    assert {i.split("/")[1] for i in await ids(service, admin, collection="instances", query="api")} >= {
        "team-a",
        "team-b",
    }
    again = await auth.view_for(provider.token(preferred_username="dana", groups=["platform"], jti="second"))
    assert again == admin
    assert review.access_reviews == 2  # the identity's decisions, not the token's
    nobody = await auth.view_for(provider.token(preferred_username="erin"))
    assert nobody is not None
    assert await ids(service, nobody, collection="instances", query="api") == set()
