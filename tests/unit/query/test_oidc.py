"""Outside identities (issue 53): a JWT is checked here against its issuer's published keys, and every
bad token is refused with a reason, counted, and never logged. Keys and tokens are real (cryptography,
PyJWT); the issuer is an in-process HTTP transport serving discovery and a key set."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from kubevec.query.oidc import (
    AUTHENTICATED,
    REFETCH_SECONDS,
    ClaimMapping,
    Issuer,
    KeysUnavailable,
    OutsideIdentities,
    TokenRefused,
)
from tests.doubles.oidc import AUDIENCE, ISSUER, NOW, Clock, Provider


@pytest.fixture
def provider() -> Provider:
    return Provider()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def identities(provider: Provider, clock: Clock, refusals: list[str] | None = None, **issuer: Any) -> OutsideIdentities:
    settings: dict[str, Any] = {
        "url": ISSUER,
        "audiences": (AUDIENCE,),
        "username": ClaimMapping(claim="preferred_username", prefix="oidc:"),
        "groups": ClaimMapping(claim="groups", prefix="oidc:"),
        **issuer,
    }
    return OutsideIdentities(
        issuers=[Issuer(**settings)],
        clock=clock,
        transport=httpx.MockTransport(provider.handler),
        on_refusal=(refusals.append if refusals is not None else None),
    )


async def test_a_good_token_maps_to_the_user_and_groups_the_configuration_says(
    provider: Provider, clock: Clock
) -> None:
    token = provider.token(preferred_username="alice", groups=["payments", "sre"])
    identity = await identities(provider, clock).identify(token)
    assert identity.user == "oidc:alice"
    assert identity.groups == ("oidc:payments", "oidc:sre", AUTHENTICATED)
    assert identity.key == (ISSUER, "u-123")
    assert identity.expires == NOW + 300


@pytest.mark.parametrize(
    ("key", "algorithm"),
    [
        (ec.generate_private_key(ec.SECP256R1()), "ES256"),
        (ed25519.Ed25519PrivateKey.generate(), "EdDSA"),
        (rsa.generate_private_key(public_exponent=65537, key_size=2048), "PS256"),
    ],
)
async def test_every_asymmetric_family_is_accepted(provider: Provider, clock: Clock, key: Any, algorithm: str) -> None:
    provider.add("k2", key)
    token = provider.token(kid="k2", algorithm=algorithm, preferred_username="bob")
    assert (await identities(provider, clock).identify(token)).user == "oidc:bob"


def _forged_none(provider: Provider) -> str:
    return jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": NOW + 60}, None, algorithm="none")


def _hs256_with_the_public_key(provider: Provider) -> str:
    public = (
        provider.keys["k1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    header = jwt.utils.base64url_encode(json.dumps({"alg": "HS256", "kid": "k1", "typ": "JWT"}).encode())
    payload = jwt.utils.base64url_encode(
        json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "preferred_username": "eve", "exp": NOW + 60}).encode()
    )
    import hashlib
    import hmac

    signature = hmac.new(public, header + b"." + payload, hashlib.sha256).digest()
    return (header + b"." + payload + b"." + jwt.utils.base64url_encode(signature)).decode()


BAD: list[tuple[str, Any, str]] = [
    (
        "forged signature",
        lambda p: p.token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048), preferred_username="eve"),
        "signature",
    ),
    ("alg none", _forged_none, "algorithm"),
    ("HS256 signed with the public key", _hs256_with_the_public_key, "algorithm"),
    ("wrong issuer", lambda p: p.token(iss="https://evil.example.com", preferred_username="eve"), "issuer"),
    ("wrong audience", lambda p: p.token(aud="https://other.example.com", preferred_username="eve"), "audience"),
    ("expired", lambda p: p.token(exp=NOW - 120, preferred_username="eve"), "expired"),
    ("not yet valid", lambda p: p.token(nbf=NOW + 600, preferred_username="eve"), "not_yet_valid"),
    ("no exp", lambda p: p.token(exp=None, preferred_username="eve"), "claims"),
    ("no username claim", lambda p: p.token(), "claims"),
    ("unknown kid", lambda p: p.token(kid="nope", key=p.keys["k1"], preferred_username="eve"), "unknown_key"),
    ("not a JWT", lambda p: "hello", "malformed"),
    ("a 1 MB token", lambda p: p.token(preferred_username="eve", pad="x" * 1_000_000), "too_large"),
]


@pytest.mark.parametrize(("case", "make", "reason"), BAD, ids=[case for case, _, _ in BAD])
async def test_each_bad_token_is_refused_with_its_reason_counted_and_never_logged(
    provider: Provider, clock: Clock, caplog: pytest.LogCaptureFixture, case: str, make: Any, reason: str
) -> None:
    refusals: list[str] = []
    token = make(provider)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(TokenRefused) as refused:
        await identities(provider, clock, refusals).identify(token)
    assert refused.value.reason == reason, case
    assert refusals == [reason]
    assert token[-20:] not in caplog.text
    assert token[-20:] not in str(refused.value)


async def test_a_system_name_is_refused_where_no_prefix_keeps_it_apart(provider: Provider, clock: Clock) -> None:
    bare = {"username": ClaimMapping(claim="preferred_username"), "groups": ClaimMapping(claim="groups")}
    refusals: list[str] = []
    for token in (
        provider.token(preferred_username="system:admin"),
        provider.token(preferred_username="eve", groups=["system:masters"]),
    ):
        with pytest.raises(TokenRefused, match="system_name"):
            await identities(provider, clock, refusals, **bare).identify(token)
    assert refusals == ["system_name", "system_name"]
    # with a prefix the name is the issuer's own: oidc:system:admin is nobody the cluster knows
    prefixed = await identities(provider, clock).identify(provider.token(preferred_username="system:admin"))
    assert prefixed.user == "oidc:system:admin"


async def test_the_leeway_allows_small_skew_and_no_more(provider: Provider, clock: Clock) -> None:
    checker = identities(provider, clock, leeway=30.0)
    token = provider.token(preferred_username="alice", exp=NOW + 10)
    clock.now = NOW + 35
    assert (await checker.identify(token)).user == "oidc:alice"
    clock.now = NOW + 41
    with pytest.raises(TokenRefused, match="expired"):
        await checker.identify(token)
    with pytest.raises(ValueError, match="leeway"):
        identities(provider, clock, leeway=300.0)


async def test_an_unknown_kid_flood_fetches_the_keys_at_most_once_a_minute(provider: Provider, clock: Clock) -> None:
    checker = identities(provider, clock)
    await checker.identify(provider.token(preferred_username="alice"))
    assert provider.fetches == 1
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for index in range(200):
        clock.now = NOW + index * 0.5
        with pytest.raises(TokenRefused, match="unknown_key"):
            await checker.identify(provider.token(kid=f"x{index}", key=stranger, preferred_username="eve"))
    assert provider.fetches <= 1 + int(100 / REFETCH_SECONDS) + 1


async def test_a_rotated_key_is_found_by_fetching_again(provider: Provider, clock: Clock) -> None:
    checker = identities(provider, clock)
    await checker.identify(provider.token(preferred_username="alice"))
    provider.add("k2", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    clock.now = NOW + REFETCH_SECONDS
    token = provider.token(kid="k2", preferred_username="alice", exp=NOW + 600)
    assert (await checker.identify(token)).user == "oidc:alice"
    assert provider.fetches == 2


async def test_a_kid_less_token_is_accepted_only_when_one_key_can_have_signed_it(
    provider: Provider, clock: Clock
) -> None:
    token = provider.token(kid=None, preferred_username="alice")
    assert (await identities(provider, clock).identify(token)).user == "oidc:alice"
    provider.add("k2", rsa.generate_private_key(public_exponent=65537, key_size=2048))
    with pytest.raises(TokenRefused, match="unknown_key"):
        await identities(provider, clock).identify(token)


async def test_cached_keys_serve_while_the_provider_is_down_and_expired_ones_answer_unavailable(
    provider: Provider, clock: Clock
) -> None:
    checker = identities(provider, clock)
    await checker.identify(provider.token(preferred_username="alice"))
    provider.down = True
    clock.now = NOW + 1800
    token = provider.token(preferred_username="alice", exp=NOW + 7200)
    assert (await checker.identify(token)).user == "oidc:alice"
    clock.now = NOW + 3601
    with pytest.raises(KeysUnavailable):
        await checker.identify(token)
    with pytest.raises(KeysUnavailable):
        await identities(provider, clock).identify(token)  # never fetched: no allow either


async def test_an_issuer_is_https_unless_it_is_on_this_machine() -> None:
    with pytest.raises(ValueError, match="https"):
        Issuer(url="http://idp.example.com", audiences=(AUDIENCE,))
    assert Issuer(url="http://127.0.0.1:5556/dex", audiences=(AUDIENCE,)).url
    with pytest.raises(ValueError, match="audience"):
        Issuer(url=ISSUER, audiences=())


async def test_only_tokens_of_a_configured_issuer_are_claimed(provider: Provider, clock: Clock) -> None:
    checker = identities(provider, clock)
    assert checker.claims_issuer(provider.token(preferred_username="a")) == ISSUER
    assert checker.claims_issuer(provider.token(iss="https://kubernetes.default.svc")) is None
    assert checker.claims_issuer("static-token") is None


async def test_a_discovery_document_naming_another_issuer_is_not_trusted(clock: Clock) -> None:
    provider = Provider()

    def lying(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("openid-configuration"):
            return httpx.Response(200, json={"issuer": "https://evil.example.com", "jwks_uri": ISSUER + "/certs"})
        return provider.handler(request)

    checker = OutsideIdentities(
        issuers=[Issuer(url=ISSUER, audiences=(AUDIENCE,))], clock=clock, transport=httpx.MockTransport(lying)
    )
    with pytest.raises(KeysUnavailable):
        await checker.identify(provider.token())


async def test_a_hostile_key_set_is_unavailable_keys_not_a_crash(clock: Clock) -> None:
    """A key set nested deeper than the parser recurses (the issuer's endpoint answering anything)."""
    provider = Provider()

    def hostile(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/certs"):
            return httpx.Response(200, content=b"[" * 200_000)
        return provider.handler(request)

    checker = OutsideIdentities(
        issuers=[Issuer(url=ISSUER, audiences=(AUDIENCE,))], clock=clock, transport=httpx.MockTransport(hostile)
    )
    with pytest.raises(KeysUnavailable):
        await checker.identify(provider.token())
