"""Agents signed in at an outside identity provider, on the real control plane (issue 53).

A real OIDC provider (``oidc-provider-mock`` from PyPI, on a loopback port: discovery, a key set,
the authorization code flow, per-user claims) signs users in; `kubevec run` trusts it through an
``AuthenticationConfiguration`` file, the API server does not. A user the cluster's RBAC binds in
one namespace sees exactly that namespace's objects over MCP; a user bound to nothing sees nothing;
a group from the token decides as a group; a token for another audience is a 401, counted by reason;
no token reaches the log.
"""

from __future__ import annotations

import secrets
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.controlplane.cluster import ControlPlane
from tests.e2e.agents import Agent, serving_tenants, workloads
from tests.e2e.controller_harness import apply

oidc_provider_mock = pytest.importorskip("oidc_provider_mock")

pytestmark = [
    pytest.mark.e2e,
    # the provider runs on authlib's older API (its own deprecation warnings, raised in its server thread)
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

ADMIN_TOKEN = "e2e-full-access-token-" + secrets.token_hex(8)
CLIENT = "kubevec"


@pytest.fixture
def provider() -> Iterator[str]:
    users = [
        oidc_provider_mock.User(sub="u-alice", claims={"preferred_username": "alice", "groups": []}),
        oidc_provider_mock.User(sub="u-bob", claims={"preferred_username": "bob", "groups": ["interns"]}),
        oidc_provider_mock.User(sub="u-carol", claims={"preferred_username": "carol", "groups": ["sre"]}),
    ]
    with oidc_provider_mock.run_server_in_thread(user_claims=users) as server:
        yield f"http://127.0.0.1:{server.server_port}"


def sign_in(issuer: str, subject: str, *, client: str = CLIENT) -> str:
    """The authorization code flow as a browser would run it; the ID token the provider issues."""
    redirect = "http://127.0.0.1/callback"
    with httpx.Client(base_url=issuer, timeout=10) as http:
        query = {"client_id": client, "redirect_uri": redirect, "response_type": "code", "scope": "openid profile"}
        granted = http.post("/oauth2/authorize", params={**query, "state": "s"}, data={"sub": subject})
        assert granted.status_code == 302, granted.text
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(granted.headers["location"]).query)["code"][0]
        tokens = http.post(
            "/oauth2/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect,
                "client_id": client,
                "client_secret": "secret",
            },
        )
        assert tokens.status_code == 200, tokens.text
        return str(tokens.json()["id_token"])


def binding(ns: str, *, kind: str, name: str) -> dict[str, object]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": f"outside-{name.replace(':', '-')}", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "agent-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}],
    }


def test_users_of_an_outside_issuer_see_what_the_clusters_rbac_lets_them_list(
    control_plane: ControlPlane, tmp_path: Path, provider: str
) -> None:
    plane = control_plane
    suffix = secrets.token_hex(3)
    ns_a, ns_b = f"outside-a-{suffix}", f"outside-b-{suffix}"
    for ns in (ns_a, ns_b):
        apply(plane, workloads(ns))
    apply(plane, binding(ns_a, kind="User", name="oidc:alice"))
    apply(plane, binding(ns_b, kind="Group", name="oidc:sre"))
    config = tmp_path / "authentication.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "apiserver.config.k8s.io/v1",
                "kind": "AuthenticationConfiguration",
                "jwt": [
                    {
                        "issuer": {"url": provider, "audiences": [CLIENT]},
                        "claimMappings": {
                            "username": {"claim": "preferred_username", "prefix": "oidc:"},
                            "groups": {"claim": "groups", "prefix": "oidc:"},
                        },
                    }
                ],
            }
        )
    )
    tokens = {name: sign_in(provider, f"u-{name}") for name in ("alice", "bob", "carol")}
    with serving_tenants(
        plane,
        tmp_path,
        token=ADMIN_TOKEN,
        namespaces=(ns_a, ns_b),
        KUBEVEC_MCP_TOKEN=ADMIN_TOKEN,
        KUBEVEC_MCP_KUBERNETES_AUTH="false",
        KUBEVEC_MCP_AUTHENTICATION_CONFIG=str(config),
    ) as served:
        alice, bob, carol = (Agent(served.url, tokens[name]) for name in ("alice", "bob", "carol"))
        seen_alice = alice.ids(query="web settings")
        seen_carol = carol.ids(query="web settings")
        assert {i.split("/")[1] for i in seen_alice} == {ns_a}
        assert {i.split("/")[4] for i in seen_alice} == {"ConfigMap", "Service", "Deployment"}  # the Role's kinds
        assert {i.split("/")[1] for i in seen_carol} == {ns_b}  # by the group in her token
        assert bob.ids(query="web settings") == set()
        assert bob.call("list_facets", field="namespace")["counts"] == {}

        # another client's token (audience) and a token with its signature changed: 401, counted by reason
        other = sign_in(provider, "u-alice", client="another-app")
        forged = tokens["alice"][:-4] + ("AAAA" if not tokens["alice"].endswith("AAAA") else "BBBB")
        for token in (other, forged, "not-a-jwt"):
            answer = httpx.post(served.url, json={}, headers={"Authorization": f"Bearer {token}"}, timeout=10)
            assert answer.status_code == 401
        assert served.metric("kubevec_mcp_tokens_refused_total", reason="audience") == 1
        assert served.metric("kubevec_mcp_tokens_refused_total", reason="signature") == 1
        # RFC 9728: the outside issuer is named as an authorization server
        metadata = httpx.get(served.url.removesuffix("/mcp") + "/.well-known/oauth-protected-resource", timeout=10)
        assert provider in metadata.json()["authorization_servers"]
    text = served.log.read_text()
    for token in tokens.values():
        assert token not in text
        assert token.rsplit(".", 1)[-1] not in text  # not even the signature
    assert "reason=audience" in text


def test_the_control_planes_own_service_account_issuer_as_an_outside_issuer(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The second real issuer: the test control plane's ServiceAccount issuer, trusted through its public
    discovery document and key set (``/.well-known/openid-configuration``, ``/openid/v1/jwks``) over TLS
    with its own certificate, as a platform team trusts another cluster's workloads. No TokenReview."""
    plane = control_plane
    suffix = secrets.token_hex(3)
    ns = f"outside-sa-{suffix}"
    apply(plane, workloads(ns))
    apply(plane, binding(ns, kind="User", name=f"sa:system:serviceaccount:{ns}:agent"))
    # what clusters grant so that others may verify their tokens: the discovery role, to everyone
    apply(
        plane,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"issuer-discovery-{suffix}"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "system:service-account-issuer-discovery",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:unauthenticated"}],
        },
    )
    certificate = (plane.workdir / "certs" / "apiserver.crt").read_text()
    config = tmp_path / "authentication.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "apiserver.config.k8s.io/v1",
                "kind": "AuthenticationConfiguration",
                "jwt": [
                    {
                        "issuer": {
                            "url": "https://kubernetes.default.svc.cluster.local",
                            "discoveryURL": f"{plane.url}/.well-known/openid-configuration",
                            "certificateAuthority": certificate,
                            "audiences": ["kubevec-outside"],
                        },
                        "claimMappings": {"username": {"claim": "sub", "prefix": "sa:"}},
                    }
                ],
            }
        )
    )
    agent = plane.kubectl("create", "token", "agent", "-n", ns, "--audience=kubevec-outside", "--duration=1h").strip()
    nobody = plane.kubectl("create", "token", "nobody", "-n", ns, "--audience=kubevec-outside").strip()
    elsewhere = plane.kubectl("create", "token", "agent", "-n", ns, "--audience=another").strip()
    with serving_tenants(
        plane,
        tmp_path,
        token=ADMIN_TOKEN,
        namespaces=(ns,),
        KUBEVEC_MCP_TOKEN=ADMIN_TOKEN,
        KUBEVEC_MCP_KUBERNETES_AUTH="false",
        KUBEVEC_MCP_AUTHENTICATION_CONFIG=str(config),
    ) as served:
        seen = Agent(served.url, agent).ids(query="web settings")
        assert {i.split("/")[1] for i in seen} == {ns}
        assert Agent(served.url, nobody).ids(query="web settings") == set()
        answer = httpx.post(served.url, json={}, headers={"Authorization": f"Bearer {elsewhere}"}, timeout=10)
        assert answer.status_code == 401
    assert "Fetched an issuer's keys issuer=https://kubernetes.default.svc.cluster.local" in served.log.read_text()
