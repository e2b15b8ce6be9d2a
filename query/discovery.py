"""OAuth 2.0 protected resource metadata (RFC 9728), as the MCP authorization spec asks of a server.

An MCP client that implements the spec reads ``/.well-known/oauth-protected-resource`` (linked from
every 401's ``WWW-Authenticate``), finds the authorization server there, signs its user in and
calls with the token it got. kubevec names the OIDC issuer the cluster's API server trusts, so that
token is one TokenReview accepts: the caller then sees what its own RBAC lets it list.
"""

from __future__ import annotations

import dataclasses
import urllib.parse
from typing import Any, Final

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"


@dataclasses.dataclass(frozen=True)
class ResourceMetadata:
    """``issuer``: the OIDC issuer URL; ``resource``: the endpoint's public URL (default: as the request came)."""

    issuer: str
    resource: str | None = None
    name: str = "kubevec"

    def resource_url(self, scope: dict[str, Any]) -> str:
        """The endpoint's URL: configured, or rebuilt from the request (a proxy's X-Forwarded-Proto honoured)."""
        if self.resource:
            return self.resource.rstrip("/")
        headers = dict(scope.get("headers") or [])
        scheme = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[0].strip() or scope.get(
            "scheme", "http"
        )
        host = headers.get(b"host", b"").decode("latin-1") or "localhost"
        return f"{scheme}://{host}/mcp"

    def metadata_url(self, scope: dict[str, Any]) -> str:
        """Where the metadata is: the well-known path inserted between host and path (RFC 9728, 3.1)."""
        parts = urllib.parse.urlsplit(self.resource_url(scope))
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + parts.path.rstrip("/"), "", ""))

    def serves(self, path: str) -> bool:
        return path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/")

    def document(self, scope: dict[str, Any]) -> dict[str, Any]:
        return {
            "resource": self.resource_url(scope),
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": self.name,
        }

    def challenge(self, scope: dict[str, Any]) -> bytes:
        """A 401's ``WWW-Authenticate``: Bearer, and where to learn how to get a token."""
        return f'Bearer resource_metadata="{self.metadata_url(scope)}"'.encode()
