"""An OIDC provider in process: discovery and a key set over an httpx transport, tokens signed with real
keys (cryptography, PyJWT); it counts key set fetches and can go down."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

ISSUER = "https://idp.example.com/realms/platform"
AUDIENCE = "https://kubevec.example.com/mcp"
NOW = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


class Provider:
    """Serves ``/.well-known/openid-configuration`` and a key set; counts key set fetches; can go down."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.fetches = 0
        self.down = False
        self.add("k1", rsa.generate_private_key(public_exponent=65537, key_size=2048))

    def add(self, kid: str, key: Any) -> None:
        self.keys[kid] = key

    def jwks(self) -> dict[str, Any]:
        out = []
        for kid, key in self.keys.items():
            public = key.public_key()
            algorithm: Any = (
                jwt.algorithms.RSAAlgorithm
                if isinstance(public, rsa.RSAPublicKey)
                else jwt.algorithms.ECAlgorithm
                if isinstance(public, ec.EllipticCurvePublicKey)
                else jwt.algorithms.OKPAlgorithm
            )
            jwk = json.loads(algorithm.to_jwk(public))
            out.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": out}

    def handler(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            return httpx.Response(503)
        if request.url.path.endswith("/.well-known/openid-configuration"):
            return httpx.Response(200, json={"issuer": ISSUER, "jwks_uri": ISSUER + "/certs"})
        if request.url.path.endswith("/certs"):
            self.fetches += 1
            return httpx.Response(200, json=self.jwks())
        return httpx.Response(404)

    def token(self, *, kid: str | None = "k1", algorithm: str = "RS256", key: Any = None, **claims: Any) -> str:
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "u-123", "exp": NOW + 300, "iat": NOW, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        headers = {"kid": kid} if kid is not None else {}
        return jwt.encode(
            body, key if key is not None else self.keys[kid or "k1"], algorithm=algorithm, headers=headers
        )
