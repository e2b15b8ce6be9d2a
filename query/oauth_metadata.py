"""OAuth 2.0 protected resource metadata (RFC 9728), as the MCP authorization spec asks of a server.

An MCP client that implements the spec reads ``/.well-known/oauth-protected-resource`` (linked from
every 401's ``WWW-Authenticate``), finds the authorization server there, signs its user in and
calls with the token it got. kubevec names the OIDC issuer the cluster's API server trusts, so that
token is one TokenReview accepts: the caller then sees what its own RBAC lets it list.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import urllib.parse
from typing import Any, Final

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"


#: What a Host header may be for its value to be written into a URL: a name or IPv4 with an optional port,
#: or a bracketed IPv6 address with one. Quotes, spaces and commas never reach a header or document.
_HOST: Final = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?"
)


@dataclasses.dataclass(frozen=True)
class ResourceMetadata:
    """``issuer``: the OIDC issuer URL; ``resource``: the endpoint's public URL (default: as the request came).

    Without ``resource``, the URL is rebuilt from the request's Host (and a proxy's
    ``X-Forwarded-Proto``), but only from a Host the endpoint accepts (``allowed_hosts``, patterns
    as ``host:*``; None: any well-formed one) and a scheme of ``http`` or ``https``: an unchecked Host
    (``x" error="injected``) landed inside the 401's ``WWW-Authenticate``.
    """

    issuer: str
    resource: str | None = None
    name: str = "kubevec"
    allowed_hosts: tuple[str, ...] | None = None
    #: Further authorization servers: the outside issuers whose tokens the endpoint checks itself.
    more_issuers: tuple[str, ...] = ()

    def resource_url(self, scope: dict[str, Any]) -> str | None:
        """The endpoint's URL: configured, else rebuilt from an accepted Host; None when the Host is not one."""
        if self.resource:
            return self.resource.rstrip("/")
        headers = dict(scope.get("headers") or [])
        forwarded = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[0].strip().lower()
        scheme = forwarded if forwarded in ("http", "https") else str(scope.get("scheme", "http"))
        if scheme not in ("http", "https"):
            scheme = "http"
        host = headers.get(b"host", b"").decode("latin-1").strip()
        if not self.accepts(host):
            return None
        return f"{scheme}://{host}/mcp"

    def accepts(self, host: str) -> bool:
        """Whether ``host`` may be written into a URL: well-formed and one the endpoint serves."""
        if not _HOST.fullmatch(host):
            return False
        if self.allowed_hosts is None:
            return True
        with_port = host if ":" in host.rsplit("]", 1)[-1] else f"{host}:80"
        return any(fnmatch.fnmatchcase(with_port, pattern) or host == pattern for pattern in self.allowed_hosts)

    def metadata_url(self, scope: dict[str, Any]) -> str | None:
        """Where the metadata is: the well-known path inserted between host and path (RFC 9728, 3.1)."""
        resource = self.resource_url(scope)
        if resource is None:
            return None
        parts = urllib.parse.urlsplit(resource)
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + parts.path.rstrip("/"), "", ""))

    def serves(self, path: str) -> bool:
        return path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/")

    def document(self, scope: dict[str, Any]) -> dict[str, Any] | None:
        """The metadata document; None for a request whose Host the endpoint does not serve."""
        resource = self.resource_url(scope)
        if resource is None:
            return None
        return {
            "resource": resource,
            "authorization_servers": list(dict.fromkeys([self.issuer, *self.more_issuers])),
            "bearer_methods_supported": ["header"],
            "resource_name": self.name,
        }

    def challenge(self, scope: dict[str, Any]) -> bytes:
        """A 401's ``WWW-Authenticate``: Bearer, and where to learn how to get a token (when the Host is ours)."""
        where = self.metadata_url(scope)
        return f'Bearer resource_metadata="{where}"'.encode() if where else b"Bearer"
