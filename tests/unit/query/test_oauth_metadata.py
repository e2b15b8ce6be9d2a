"""RFC 9728 protected resource metadata: MCP clients that implement the spec find where to sign a user in."""

from __future__ import annotations

import httpx
import pytest

from kubevec.backends.memory import MemoryStore
from kubevec.controller.settings import Settings
from kubevec.query.access import Authorizer
from kubevec.query.mcp import http_app
from kubevec.query.oauth_metadata import ResourceMetadata
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder

ISSUER = "https://login.example.com/realms/platform"


def client(
    discovery: ResourceMetadata | None, *, allowed_hosts: tuple[str, ...] = ("kubevec.example.com:*",)
) -> httpx.AsyncClient:
    service = SearchService(store=MemoryStore(), embedder=CountingEmbedder(), collections={})
    app = http_app(
        service,
        host="127.0.0.1",
        authorizer=Authorizer(cluster="prod", full_token="s3cret"),
        discovery=discovery,
        allowed_hosts=allowed_hosts,
    )
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://kubevec.example.com")


async def test_a_401_names_the_metadata_and_the_metadata_names_the_issuer() -> None:
    async with client(ResourceMetadata(issuer=ISSUER)) as http:
        refused = await http.post("/mcp", json={})
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert (
            challenge
            == 'Bearer resource_metadata="http://kubevec.example.com/.well-known/oauth-protected-resource/mcp"'
        )
        metadata = await http.get("/.well-known/oauth-protected-resource/mcp")  # no token needed
        assert metadata.status_code == 200
        assert metadata.json() == {
            "resource": "http://kubevec.example.com/mcp",
            "authorization_servers": [ISSUER],
            "bearer_methods_supported": ["header"],
            "resource_name": "kubevec",
        }
        behind_a_proxy = await http.get("/.well-known/oauth-protected-resource", headers={"x-forwarded-proto": "https"})
        assert behind_a_proxy.json()["resource"] == "https://kubevec.example.com/mcp"


@pytest.mark.parametrize(
    "headers",
    [
        {"host": 'x" error="injected'},
        {"host": "evil.example.net"},
        {"host": "kubevec.example.com, evil.example.net"},
        {"host": "kubevec.example.com", "x-forwarded-proto": 'javascript" x="'},
    ],
)
async def test_urls_come_only_from_hosts_the_endpoint_serves(headers: dict[str, str]) -> None:
    """Without KUBEVEC_MCP_RESOURCE_URL the URLs were rebuilt from any Host: a quote landed inside the header."""
    async with client(ResourceMetadata(issuer=ISSUER)) as http:
        refused = await http.post("/mcp", json={}, headers=headers)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert "injected" not in challenge
        assert "evil" not in challenge
        assert "javascript" not in challenge
        assert challenge in (
            "Bearer",
            'Bearer resource_metadata="http://kubevec.example.com/.well-known/oauth-protected-resource/mcp"',
        )
        metadata = await http.get("/.well-known/oauth-protected-resource/mcp", headers=headers)
        assert metadata.status_code in (200, 421)
        assert "evil" not in metadata.text
        assert "injected" not in metadata.text
        assert "javascript" not in metadata.text


async def test_a_configured_public_url_wins_over_the_request() -> None:
    async with client(ResourceMetadata(issuer=ISSUER, resource="https://agents.example.com/kubevec/mcp/")) as http:
        refused = await http.post("/mcp", json={})
        assert refused.headers["www-authenticate"] == (
            'Bearer resource_metadata="https://agents.example.com/.well-known/oauth-protected-resource/kubevec/mcp"'
        )
        assert (await http.get("/.well-known/oauth-protected-resource/kubevec/mcp")).json()["resource"] == (
            "https://agents.example.com/kubevec/mcp"
        )


async def test_without_an_issuer_nothing_is_advertised() -> None:
    async with client(None) as http:
        refused = await http.post("/mcp", json={})
        assert refused.headers["www-authenticate"] == "Bearer"
        assert (await http.get("/.well-known/oauth-protected-resource")).status_code == 401  # behind the guard


def test_settings_make_the_metadata_only_with_an_issuer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().mcp_discovery() is None
    monkeypatch.setenv("KUBEVEC_MCP_OIDC_ISSUER", ISSUER)
    monkeypatch.setenv("KUBEVEC_CLUSTER_NAME", "prod")
    made = Settings().mcp_discovery()
    assert made == ResourceMetadata(issuer=ISSUER, resource=None, name="kubevec (prod)")
