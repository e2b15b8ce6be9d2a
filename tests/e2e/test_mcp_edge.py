"""The agent edge on a real API server (issue 40): a Kubernetes user named like a static token owns none
of its sessions or caps, ``resourceNames: [""]`` allows a list as the API server says, and the RFC 9728
challenge never echoes a Host the endpoint does not serve."""

from __future__ import annotations

import http.client
import secrets
from pathlib import Path

import httpx2
import pytest

from tests.controlplane.cluster import IMPOSTOR_USER, ControlPlane
from tests.e2e.agents import Agent, serving_tenants, workloads
from tests.e2e.controller_harness import apply

pytestmark = pytest.mark.e2e
OPS_TOKEN = "ops-static-token-0123456789abcdef"
ISSUER = "https://login.example.com/realms/platform"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def open_session(url: str, token: str) -> tuple[int, str | None]:
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    answer = httpx2.post(url, json=body, headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=10)
    return answer.status_code, answer.headers.get("mcp-session-id")


def use_session(url: str, token: str, session: str) -> int:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {**ACCEPT, "Authorization": f"Bearer {token}", "mcp-session-id": session}
    return httpx2.post(url, json=listing, headers=headers, timeout=10).status_code


def challenge(port: int, host: str) -> tuple[int, str]:
    """An unauthenticated POST with this Host header, sent as written (http.client does not check it)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest("POST", "/mcp", skip_host=True)
    connection.putheader("Host", host)
    connection.putheader("Content-Length", "2")
    connection.endheaders(b"{}")
    answer = connection.getresponse()
    return answer.status, answer.getheader("www-authenticate") or ""


def test_the_agent_edge_on_a_real_api_server(control_plane: ControlPlane, tmp_path: Path) -> None:
    plane = control_plane
    ns = f"edge-{secrets.token_hex(3)}"
    apply(plane, workloads(ns))
    # list configmaps with resourceNames [""]: the API server allows the list (its name is ""), as kubevec must
    apply(
        plane,
        [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "empty-name", "namespace": ns},
             "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"], "resourceNames": [""]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "empty-name", "namespace": ns},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "empty-name"},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": IMPOSTOR_USER}]},
        ],
    )  # fmt: skip
    assert plane.kubectl("auth", "can-i", "list", "configmaps", "-n", ns, "--as", IMPOSTOR_USER).strip() == "yes"
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(f"tokens:\n  - {{name: ops, token: {OPS_TOKEN}, namespaces: ['*']}}\n")
    with serving_tenants(
        plane,
        tmp_path,
        token=plane.admin_token,
        namespaces=(ns,),
        KUBEVEC_MCP_TOKENS_FILE=str(tokens),
        KUBEVEC_MCP_CALLER_SESSIONS="2",
        KUBEVEC_MCP_OIDC_ISSUER=ISSUER,
    ) as served:
        url = served.url
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        # resourceNames [""]: the user sees the namespace's ConfigMaps, and nothing else there
        seen = Agent(url, plane.impostor_token).ids(filter={"namespace": ns})
        assert {i.split("/")[4] for i in seen} == {"ConfigMap"}, seen
        # typed callers: the API-server user named static:ops is not the static token named ops (2 sessions each)
        status, session = open_session(url, OPS_TOKEN)
        assert status == 200
        assert session
        assert use_session(url, OPS_TOKEN, session) == 200
        assert use_session(url, plane.impostor_token, session) == 404
        assert open_session(url, OPS_TOKEN)[0] == 200  # the token is now at its cap
        assert open_session(url, plane.impostor_token)[0] == 200  # the user's own cap, not the token's
        assert open_session(url, OPS_TOKEN)[0] == 429  # the token's cap still holds
        # RFC 9728: the challenge names the metadata only for a Host the endpoint serves
        status, header = challenge(port, f"127.0.0.1:{port}")
        assert status == 401
        assert header == f'Bearer resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"'
        status, header = challenge(port, 'x" error="injected')
        assert status == 401
        assert header == "Bearer"
        status, header = challenge(port, "evil.example.net")
        assert (status, header) == (401, "Bearer")
