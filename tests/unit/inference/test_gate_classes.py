"""Classes of credentials and ordinary values the second blind set (``trust_v5``) found at first sight, each in
our own wording: config lines and seed phrases quoted in prose, prose in scripts written without spaces,
grouped codes, a break-glass label; and public keys, ARNs, issuer URLs, yes/no query values and UUIDs
named in messages, which are public and kept.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import REDACTED, redact_object, redact_text, scrub
from kubevec.inference.redaction.seed_words import WORDS


def _shown(body: dict[str, Any], plural: str = "gizmos") -> str:
    return build_instance(body, plural=plural).to_document().text


def _gizmo(**parts: Any) -> dict[str, Any]:
    meta = {"name": "g", "namespace": "ops", "uid": "9d0c7a1e-1b2c-4d3e-8f4a-5b6c7d8e9f00"}
    return {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {**meta, **parts.pop("metadata", {})}, **parts}


# --- credentials --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Nightly export; its ~/.pgpass entry is pg-main.example.net:6432:billing:exporter:Qm#81vLx!pe", "Qm#81vLx!pe"),
        ("reads pgpass (reports.db.internal:5432:*:*:Zt4$wq9Ke) before dumping", "Zt4$wq9Ke"),
    ],
)
def test_a_pgpass_line_quoted_in_prose_loses_its_password(text: str, secret: str) -> None:
    judged = redact_text(text)
    assert secret not in judged
    assert "billing" in judged or "reports.db.internal" in judged  # the rest of the line stays


def test_a_colon_record_that_is_no_pgpass_line_stays() -> None:
    for text in ("IPv6 fe80:0:0:0:1 is link-local", "started at 10:30:00:125 on node-a"):
        assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("ステージングの管理者パスワードは Tq9-mWzRkVbLpX です。", "Tq9-mWzRkVbLpX"),
        ("测试环境的账号 admin，登录密码：Xr7+kPq2Lm!v", "Xr7+kPq2Lm!v"),
        ("결제 DB 접속 정보：비밀번호：Hv3#pLq8Zx", "Hv3#pLq8Zx"),
    ],
)
def test_prose_in_scripts_without_spaces_keeps_only_its_safe_tokens(text: str, secret: str) -> None:
    assert secret not in redact_text(text)
    body = _gizmo(metadata={"annotations": {"acme.io/description": text}})
    assert secret not in _shown(body)


@pytest.mark.parametrize(
    "text",
    [
        "本番クラスタの web-7d9f8c6b5-x2k4p が再起動しました。原因はメモリ不足です。",
        "订单服务（orders-api）已扩容到 5 个副本，版本 v2.3.1。",
    ],
)
def test_prose_in_scripts_without_spaces_keeps_its_names_and_words(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("key", ["break-glass", "emergency.acme.io/break-glass", "breakGlass"])
def test_a_break_glass_label_or_field_holds_a_credential(key: str) -> None:
    value = "7Hq.Lx2-Pz_9wK"
    labels = redact_object(_gizmo(metadata={"labels": {key: value}}))
    assert labels.obj["metadata"]["labels"][key] == REDACTED
    assert scrub({key: value})[key] == REDACTED
    kept = redact_object(_gizmo(metadata={"labels": {key: "enabled"}}))
    assert kept.obj["metadata"]["labels"][key] == "enabled"  # a yes/no says it is on, not what it is


def test_a_name_that_mentions_break_glass_but_names_something_else_keeps_its_value() -> None:
    assert scrub({"breakGlassSecretName": "ops-emergency"})["breakGlassSecretName"] == "ops-emergency"


def _phrase(start: int, count: int, step: int = 97) -> str:
    return " ".join(WORDS[(start + i * step) % len(WORDS)] for i in range(count))


def test_the_seed_word_list_is_the_published_one() -> None:
    assert len(WORDS) == 2048
    digest = hashlib.sha256(("\n".join(WORDS) + "\n").encode()).hexdigest()
    assert digest == "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"


@pytest.mark.parametrize(
    ("template", "count"),
    [
        ("Treasury signer. Its seed words, in order: {}. Keep offline.", 12),
        ("wallet import failed for phrase '{}' (bad length)", 15),
        ("{}", 24),
        ("backup of the faucet key:\n{}\n", 12),
    ],
)
def test_a_seed_phrase_goes_whatever_stands_around_it(template: str, count: int) -> None:
    phrase = _phrase(count * 11, count)
    text = template.format(phrase)
    judged = redact_text(text)
    assert phrase not in judged
    assert " ".join(phrase.split()[3:9]) not in judged  # not even part of it
    condition = {"type": "Ready", "status": "False", "message": text}
    shown = build_instance(_gizmo(status={"conditions": [condition]}), plural="gizmos").to_document()
    assert " ".join(phrase.split()[:6]) not in shown.text + str(dict(shown.metadata))


@pytest.mark.parametrize(
    "text",
    [
        "When the pool is empty the job will wait and then check again after a short time.",
        _phrase(5, 11),  # eleven list words: shorter than any seed phrase
        " ".join(["word", "order"] * 10),  # list words, but repeated: nothing drawn at random
        "Tags: " + ", ".join(_phrase(40, 6).split()) + " and " + _phrase(900, 6),  # broken by "and"
    ],
)
def test_ordinary_words_make_no_seed_phrase(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("sign-in blocked: type one of your spare codes (first: m3vq-8kzt-p2wd) to proceed", "m3vq-8kzt-p2wd"),
        ("Operator console unlock string 4fq7x-bn2k9-x7hm3-q2wz8 was printed once.", "4fq7x-bn2k9-x7hm3-q2wz8"),
    ],
)
def test_a_code_printed_in_groups_goes_from_prose(text: str, code: str) -> None:
    assert code not in redact_text(text)


def test_a_code_printed_in_groups_goes_from_a_field_whose_name_says_nothing() -> None:
    assert scrub({"activation": "k2pq-9tzm-w4xr"})["activation"] == REDACTED


@pytest.mark.parametrize(
    "text",
    [
        "pod web-7d9f8c6b5-x2k4p on node ip-10-0-1-23 restarted",
        "instance types m5a-large and c6gn-large are allowed",
    ],
)
def test_names_with_groups_of_other_lengths_are_no_codes(text: str) -> None:
    assert redact_text(text) == text


# --- ordinary values ----------------------------------------------------------------------------------------


@functools.cache
def _public_pem(kind: str) -> tuple[str, str]:
    key: Any
    if kind == "rsa":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    elif kind == "ec":
        key = ec.generate_private_key(ec.SECP384R1())
    else:
        key = ed25519.Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return public.decode(), private.decode()


@pytest.mark.parametrize(
    ("kind", "says"),
    [("rsa", "<public key: RSA 2048 bits>"), ("ec", "<public key: EC secp384r1>"), ("ed", "<public key: Ed25519>")],
)
def test_a_public_key_block_is_kept_as_what_it_is(kind: str, says: str) -> None:
    public, _ = _public_pem(kind)
    for value in (public, base64.b64encode(public.encode()).decode()):
        assert redact_text(value) == says
        text = _shown(_gizmo(spec={"publicKey": value}))
        assert says in text
        assert REDACTED not in text


def test_two_public_keys_are_summarised_together_and_a_private_key_beside_one_is_not() -> None:
    rsa_key, _ = _public_pem("rsa")
    ec_key, ec_private = _public_pem("ec")
    assert redact_text(rsa_key + ec_key) == "<2 public keys: RSA 2048 bits and 1 more>"
    judged = redact_text(ec_key + ec_private)
    assert "PRIVATE" not in judged.replace("-----BEGIN PRIVATE KEY-----", "") or REDACTED in judged
    assert ec_private.splitlines()[1] not in judged


def test_a_public_key_block_that_does_not_parse_shows_none_of_its_text() -> None:
    body = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAq" + "Zx9" * 20
    judged = redact_text(f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n")
    assert judged == "<public key: unreadable>"


@pytest.mark.parametrize(
    "text",
    [
        "deregistered from target group arn:aws:elasticloadbalancing:us-east-2:210987654321:targetgroup/web-blue/0a1b2c3d4e5f6a7b after drain",
        "published to arn:aws:sns:eu-central-1:210987654321:orders-events and acknowledged",
    ],
)
def test_an_arn_in_prose_is_kept(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("key", "url"),
    [
        ("oidcIssuerURL", "https://oidc.eks.us-east-2.amazonaws.com/id/0F1E2D3C4B5A69788796A5B4C3D2E1F0"),
        ("issuer", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Qw3RtY7uI"),
        ("serviceAccountIssuer", "https://tenant.example.com/oauth2/aus7Hq2Lx9Pz4wKe1"),
    ],
)
def test_an_issuer_url_is_published_and_kept(key: str, url: str) -> None:
    assert scrub({key: url})[key] == url
    assert redact_text(f"--oidc-issuer-url={url}") == f"--oidc-issuer-url={url}"
    assert redact_text(f"issuer: {url}") == f"issuer: {url}"


def test_an_issuer_url_still_loses_userinfo_and_unsafe_query_values() -> None:
    judged = scrub({"issuer": "https://svc:Hq7Lx2Pz9wK@idp.example.com/realms/ops?client_secret=Zt4wq9KeLm2Xp7Qa"})
    assert "Hq7Lx2Pz9wK" not in judged["issuer"]
    assert "Zt4wq9KeLm2Xp7Qa" not in judged["issuer"]
    assert "idp.example.com/realms/ops" in judged["issuer"]


def test_a_yes_or_no_query_value_is_kept_whatever_its_key() -> None:
    text = 'probe failed: GET "https://consul.example.org:8501/v1/health/service/web?passing=true&stale=false": i/o timeout'
    assert redact_text(text) == text
    assert "Hq7Lx2Pz9wKmZt4" not in redact_text(
        'call failed: GET "https://api.example.org/v1/x?passing=true&sig=Hq7Lx2Pz9wKmZt4": refused'
    )


def test_judging_judged_text_again_changes_nothing() -> None:
    text = 'call failed: GET "https://api.example.org/v1/x?sig=Hq7Lx2Pz9wKmZt4": refused'
    once = redact_text(text)
    assert redact_text(once) == once


@pytest.mark.parametrize(
    "text",
    [
        "job 3b241101-e2bb-4255-8caf-4136c566a962 finished with 2 errors",
        "Trace ID: 3B241101-E2BB-4255-8CAF-4136C566A962 (see the collector)",
        "volume 0e6f1c7a-35c4-4b8e-9d52-0f2a1b3c4d5e is still attached to node worker-2",
    ],
)
def test_a_uuid_a_message_names_is_kept(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "the API key is 3b241101-e2bb-4255-8caf-4136c566a962 for now",
        "token 3b241101-e2bb-4255-8caf-4136c566a962 expired",
        "log in with 3b241101-e2bb-4255-8caf-4136c566a962 then rotate",
    ],
)
def test_a_uuid_that_no_word_names_or_a_cue_introduces_still_goes(text: str) -> None:
    assert "3b241101-e2bb-4255-8caf-4136c566a962" not in redact_text(text)
