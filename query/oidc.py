"""Identities from an outside identity provider: a JWT checked here, mapped to a Kubernetes user.

Platform teams sign people and agents in with an OIDC provider (Keycloak, Entra, Okta, Dex...) whose
tokens the API server often does not trust, so TokenReview cannot vouch for them. kubevec checks
such a token itself, the way the API server's structured authentication would: the signature
against the issuer's published keys (discovery, cached; fetched again for an unknown ``kid`` at most
once a minute), only asymmetric algorithms (never ``none`` or HMAC: an HS256 token "signed" with the
public key is the classic forgery), ``iss`` exactly, ``aud`` holding a configured audience,
``exp``/``nbf`` with a small leeway. Its claims map to a user and groups in the shape of the API
server's ``AuthenticationConfiguration`` ``jwt[]`` entries (``claimMappings.username``/``groups``
with ``claim`` and ``prefix``), and the per-identity views then decide with the cluster's own RBAC,
as for any other caller. A ``system:`` name from an outside issuer is refused: only the cluster
hands those out.

Every refusal names its reason (:class:`TokenRefused`, counted by the caller); the token itself is
never logged or echoed. When an issuer's keys have expired and cannot be fetched again the answer
is :class:`KeysUnavailable` (a 503), never an allow.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import httpx
import jwt
import yaml

from kubevec.core.errors import ConfigError, KeysUnavailable, TokenRefused

logger = logging.getLogger(__name__)

#: Signature algorithms accepted: asymmetric only.
ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
#: Longer tokens are refused before they are parsed (a real one is a few KiB).
MAX_TOKEN_BYTES: Final = 16 * 1024
#: The most clock skew tolerated on ``exp``, ``nbf`` and ``iat``.
MAX_LEEWAY: Final = 60.0
#: An unknown ``kid`` fetches the issuer's keys again at most this often.
REFETCH_SECONDS: Final = 60.0
#: How long fetched keys are used (a JWKS response's ``Cache-Control: max-age`` shortens it).
KEYS_SECONDS: Final = 3600.0
#: The largest discovery document or key set read.
MAX_DOCUMENT_BYTES: Final = 1024 * 1024
AUTHENTICATED: Final = "system:authenticated"

#: Why a token was refused (the metric's ``reason`` label).
REASONS: Final = (
    "malformed",
    "too_large",
    "algorithm",
    "issuer",
    "audience",
    "expired",
    "not_yet_valid",
    "signature",
    "unknown_key",
    "claims",
    "system_name",
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClaimMapping:
    """Which claim names the user (or groups), and the prefix put before it (``oidc:``)."""

    claim: str
    prefix: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Issuer:
    """One trusted issuer, as an ``AuthenticationConfiguration`` ``jwt[]`` entry says it."""

    url: str
    audiences: tuple[str, ...]
    #: Where the discovery document is, when not under ``url`` (a provider behind another name).
    discovery_url: str | None = None
    #: PEM of the CA that signs the provider's TLS certificate (else the system's).
    certificate_authority: str | None = None
    username: ClaimMapping = ClaimMapping(claim="sub")
    groups: ClaimMapping | None = None
    leeway: float = 30.0

    def __post_init__(self) -> None:
        if not self.audiences:
            raise ValueError(f"issuer {self.url}: at least one audience")
        if not 0 <= self.leeway <= MAX_LEEWAY:
            raise ValueError(f"issuer {self.url}: leeway must be between 0 and {MAX_LEEWAY:.0f} s")
        for url in (self.url, self.discovery_url):
            if url is not None and not _secure(url):
                raise ValueError(f"issuer {self.url}: {url} must be https (http only on a loopback address)")


@dataclasses.dataclass(frozen=True, kw_only=True)
class OutsideIdentity:
    """A checked caller: keyed on ``(issuer, subject)``; ``user`` and ``groups`` as RBAC sees them."""

    issuer: str
    subject: str
    user: str
    groups: tuple[str, ...]
    #: The token's ``exp`` (Unix seconds): the identity is not used past it.
    expires: float

    @property
    def key(self) -> tuple[str, str]:
        return (self.issuer, self.subject)


@dataclasses.dataclass
class _Keys:
    keys: dict[str, jwt.PyJWK]
    expires: float
    fetched: float


class OutsideIdentities:
    """Checks tokens of the configured issuers (several at once) and maps them to identities."""

    def __init__(
        self,
        *,
        issuers: Sequence[Issuer],
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
        on_refusal: Callable[[str], None] | None = None,
    ) -> None:
        urls = [issuer.url for issuer in issuers]
        if len(set(urls)) != len(urls):
            raise ValueError("each issuer URL once")
        self._issuers = {issuer.url: issuer for issuer in issuers}
        self._clock = clock
        self._transport = transport
        self._on_refusal = on_refusal
        self._keys: dict[str, _Keys] = {}
        self._attempted: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {url: asyncio.Lock() for url in self._issuers}
        #: Refusals by reason (``kubevec_mcp_tokens_refused_total``).
        self.refused: collections.Counter[str] = collections.Counter(dict.fromkeys(REASONS, 0))

    @property
    def issuers(self) -> tuple[str, ...]:
        return tuple(self._issuers)

    def claims_issuer(self, token: str) -> str | None:
        """The configured issuer a token says it is from (unverified: only to route it), or None."""
        if len(token) > MAX_TOKEN_BYTES or token.count(".") != 2:
            return None
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return None
        issuer = claims.get("iss") if isinstance(claims, Mapping) else None
        return issuer if isinstance(issuer, str) and issuer in self._issuers else None

    async def identify(self, token: str) -> OutsideIdentity:
        """The identity the token proves; :class:`TokenRefused` or :class:`KeysUnavailable` otherwise."""
        try:
            return await self._identify(token)
        except TokenRefused as refused:
            self.refused[refused.reason] += 1
            if self._on_refusal is not None:
                self._on_refusal(refused.reason)
            raise

    async def _identify(self, token: str) -> OutsideIdentity:
        if len(token.encode()) > MAX_TOKEN_BYTES:
            raise TokenRefused("too_large", f"a token of more than {MAX_TOKEN_BYTES} bytes")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenRefused("malformed", "not a signed JWT") from exc
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise TokenRefused("algorithm", f"algorithm {str(algorithm)[:16]!r} is not accepted")
        url = self.claims_issuer(token)
        if url is None:
            raise TokenRefused("issuer", "not from a configured issuer")
        issuer = self._issuers[url]
        key = await self._key(issuer, header.get("kid"))
        if key.key_type != _KEY_TYPES[algorithm[:2]]:
            raise TokenRefused("algorithm", f"a {key.key_type} key does not sign {algorithm}")
        claims = self._verified(token, key=key, algorithm=str(algorithm), issuer=issuer)
        return self._identity(claims, issuer=issuer)

    def _verified(self, token: str, *, key: jwt.PyJWK, algorithm: str, issuer: Issuer) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                audience=list(issuer.audiences),
                issuer=issuer.url,
                leeway=issuer.leeway,
                # times are judged below, on the injected clock
                options={
                    "require": ["exp", "iss", "aud"],
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.ExpiredSignatureError as exc:
            raise TokenRefused("expired", "the token has expired") from exc
        except jwt.ImmatureSignatureError as exc:
            raise TokenRefused("not_yet_valid", "the token is not valid yet") from exc
        except jwt.InvalidAudienceError as exc:
            raise TokenRefused("audience", f"the token is not for {', '.join(issuer.audiences)}") from exc
        except jwt.InvalidIssuerError as exc:
            raise TokenRefused("issuer", "not from a configured issuer") from exc
        except jwt.InvalidSignatureError as exc:
            raise TokenRefused("signature", "the signature does not verify") from exc
        except jwt.MissingRequiredClaimError as exc:
            raise TokenRefused("claims", f"the token has no {exc.claim!r} claim") from exc
        except jwt.PyJWTError as exc:
            raise TokenRefused("malformed", type(exc).__name__) from exc
        expires = claims.get("exp")
        if not isinstance(expires, int | float) or expires + issuer.leeway <= self._clock():
            raise TokenRefused("expired", "the token has expired")
        for claim in ("nbf", "iat"):
            value = claims.get(claim)
            if value is not None and not isinstance(value, int | float):
                raise TokenRefused("claims", f"the {claim!r} claim is not a number")
            if isinstance(value, int | float) and value - issuer.leeway > self._clock():
                raise TokenRefused("not_yet_valid", "the token is not valid yet")
        return claims

    def _identity(self, claims: Mapping[str, Any], *, issuer: Issuer) -> OutsideIdentity:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise TokenRefused("claims", "the token has no subject")
        name = claims.get(issuer.username.claim)
        if not isinstance(name, str) or not name:
            raise TokenRefused("claims", f"the token has no {issuer.username.claim!r} claim")
        if issuer.username.claim == "email" and claims.get("email_verified") is False:
            raise TokenRefused("claims", "the email is not verified")
        user = issuer.username.prefix + name
        groups: list[str] = []
        if issuer.groups is not None:
            value = claims.get(issuer.groups.claim)
            listed = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            groups = [issuer.groups.prefix + group for group in listed if isinstance(group, str) and group]
        if any(name.startswith("system:") for name in (user, *groups)):
            raise TokenRefused("system_name", "system: names are the cluster's own")
        expires = float(claims["exp"])
        return OutsideIdentity(
            issuer=issuer.url,
            subject=subject,
            user=user,
            groups=tuple(dict.fromkeys([*groups, AUTHENTICATED])),
            expires=expires,
        )

    async def _key(self, issuer: Issuer, kid: object) -> jwt.PyJWK:
        now = self._clock()
        cached = self._keys.get(issuer.url)
        if cached is None or cached.expires <= now:
            cached = await self._fetch(issuer, since=now, required=True)
        assert cached is not None
        found = _pick(cached.keys, kid)
        if found is None and now - self._attempted.get(issuer.url, float("-inf")) >= REFETCH_SECONDS:
            cached = await self._fetch(issuer, since=now, required=False) or cached
            found = _pick(cached.keys, kid)
        if found is None:
            raise TokenRefused("unknown_key", "signed with a key the issuer does not publish")
        return found

    async def _fetch(self, issuer: Issuer, *, since: float, required: bool) -> _Keys | None:
        """The issuer's keys, fetched now (one fetch at a time per issuer); None when a refetch failed."""
        async with self._locks[issuer.url]:
            now = self._clock()
            cached = self._keys.get(issuer.url)
            if cached is not None and cached.fetched >= since and cached.expires > now:
                return cached  # another caller fetched them while this one waited
            self._attempted[issuer.url] = now
            try:
                keys, max_age = await self._download(issuer)
            except (httpx.HTTPError, ValueError, KeyError, RecursionError, jwt.PyJWTError) as exc:
                logger.warning("Could not fetch an issuer's keys issuer=%s error=%s", issuer.url, _short(exc))
                if required and (cached is None or cached.expires <= now):
                    raise KeysUnavailable(f"the keys of {issuer.url} could not be fetched") from exc
                return None
            fetched = _Keys(keys=keys, expires=now + min(KEYS_SECONDS, max_age), fetched=now)
            self._keys[issuer.url] = fetched
            logger.info("Fetched an issuer's keys issuer=%s count=%d", issuer.url, len(keys))
            return fetched

    async def _download(self, issuer: Issuer) -> tuple[dict[str, jwt.PyJWK], float]:
        verify: ssl.SSLContext | bool = True
        if issuer.certificate_authority:
            verify = ssl.create_default_context(cadata=issuer.certificate_authority)
        async with httpx.AsyncClient(transport=self._transport, verify=verify, timeout=10.0) as client:
            base = issuer.discovery_url or issuer.url.rstrip("/") + "/.well-known/openid-configuration"
            discovery = await _json(client, base)
            if discovery.get("issuer") != issuer.url:
                raise ValueError(f"the discovery document names issuer {str(discovery.get('issuer'))[:200]!r}")
            jwks_uri = discovery.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not _secure(jwks_uri):
                raise ValueError("the discovery document's jwks_uri must be an https URL")
            response = await client.get(jwks_uri)
            response.raise_for_status()
            if len(response.content) > MAX_DOCUMENT_BYTES:
                raise ValueError("the key set is too large")
            key_set = jwt.PyJWKSet.from_dict(json.loads(response.content))
        keys = {
            str(key.key_id or ""): key
            for key in key_set.keys
            if key.public_key_use in (None, "sig") and key.key_type in ("RSA", "EC", "OKP")
        }
        return keys, _max_age(response.headers.get("cache-control"))


_KEY_TYPES: Final = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


def _pick(keys: Mapping[str, jwt.PyJWK], kid: object) -> jwt.PyJWK | None:
    if isinstance(kid, str) and kid:
        return keys.get(kid)
    if kid is None and len(keys) == 1:
        return next(iter(keys.values()))  # a kid-less token, and only one key it can be
    return None


async def _json(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    response = await client.get(url)
    response.raise_for_status()
    if len(response.content) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{url} is too large")
    document = json.loads(response.content)
    if not isinstance(document, dict):
        raise ValueError(f"{url} is not a JSON object")
    return document


def _max_age(cache_control: str | None) -> float:
    for part in (cache_control or "").split(","):
        name, _, value = part.strip().partition("=")
        if name.lower() == "max-age" and value.isdigit():
            return max(60.0, float(value))
    return KEYS_SECONDS


def _secure(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme == "https":
        return True
    return parsed.scheme == "http" and parsed.hostname in ("127.0.0.1", "localhost", "::1")


def _short(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error)[:200]}"


# -- the configuration, in the API server's own format ---------------------------------------------------

#: What an ``AuthenticationConfiguration`` may hold that kubevec cannot honour: refused, never ignored
#: (a platform team relying on a validation rule must not get a kubevec that skips it).
_UNSUPPORTED: Final = ("claimValidationRules", "userValidationRules")


def issuers_of(document: Mapping[str, Any], *, source: str = "the authentication configuration") -> list[Issuer]:
    """The JWT issuers of an ``AuthenticationConfiguration`` (``apiserver.config.k8s.io``), as the API
    server reads them: ``issuer.url``/``audiences``/``discoveryURL``/``certificateAuthority`` and
    ``claimMappings.username``/``groups`` with ``claim`` and ``prefix``. CEL expressions and validation
    rules are refused with the field named (:class:`ConfigError`)."""
    if document.get("kind") != "AuthenticationConfiguration":
        raise ConfigError(f"{source}: kind must be AuthenticationConfiguration")
    entries = document.get("jwt")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{source}: jwt must list at least one issuer")
    issuers = []
    for index, entry in enumerate(entries):
        where = f"{source}: jwt[{index}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where} must be a mapping")
        for key in _UNSUPPORTED:
            if entry.get(key):
                raise ConfigError(f"{where}.{key}: CEL rules are not supported by kubevec; remove them for its copy")
        issuer = entry.get("issuer")
        if not isinstance(issuer, Mapping) or not isinstance(issuer.get("url"), str):
            raise ConfigError(f"{where}.issuer.url is required")
        policy = issuer.get("audienceMatchPolicy", "MatchAny")
        if policy != "MatchAny":
            raise ConfigError(f"{where}.issuer.audienceMatchPolicy: only MatchAny")
        audiences = issuer.get("audiences")
        if not isinstance(audiences, list) or not all(isinstance(a, str) and a for a in audiences) or not audiences:
            raise ConfigError(f"{where}.issuer.audiences: a list of at least one audience")
        mappings = entry.get("claimMappings") or {}
        if not isinstance(mappings, Mapping):
            raise ConfigError(f"{where}.claimMappings must be a mapping")
        unknown = sorted(set(mappings) - {"username", "groups"})
        if unknown:
            raise ConfigError(
                f"{where}.claimMappings.{unknown[0]}: not supported by kubevec (it decides by user and groups)"
            )
        username = _mapping(mappings.get("username"), where=f"{where}.claimMappings.username", required=True)
        groups = _mapping(mappings.get("groups"), where=f"{where}.claimMappings.groups", required=False)
        try:
            issuers.append(
                Issuer(
                    url=issuer["url"],
                    audiences=tuple(audiences),
                    discovery_url=_optional_text(issuer.get("discoveryURL"), where=f"{where}.issuer.discoveryURL"),
                    certificate_authority=_optional_text(
                        issuer.get("certificateAuthority"), where=f"{where}.issuer.certificateAuthority"
                    ),
                    username=username or ClaimMapping(claim="sub"),
                    groups=groups,
                )
            )
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    if len({issuer.url for issuer in issuers}) != len(issuers):
        raise ConfigError(f"{source}: each issuer URL once")
    return issuers


def read_issuers(path: Path) -> list[Issuer]:
    """:func:`issuers_of` the YAML or JSON file at ``path``."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the authentication configuration: {exc}") from None
    if not isinstance(document, Mapping):
        raise ConfigError(f"{path}: not an AuthenticationConfiguration")
    return issuers_of(document, source=str(path))


def _mapping(value: object, *, where: str, required: bool) -> ClaimMapping | None:
    if value is None:
        if required:
            raise ConfigError(f"{where}: a claim is required")
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping")
    if value.get("expression"):
        raise ConfigError(f"{where}.expression: CEL expressions are not supported by kubevec; use claim and prefix")
    claim, prefix = value.get("claim"), value.get("prefix", "")
    if not isinstance(claim, str) or not claim or not isinstance(prefix, str):
        raise ConfigError(f"{where}: claim (and prefix) must be text")
    return ClaimMapping(claim=claim, prefix=prefix)


def _optional_text(value: object, *, where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be text")
    return value
