"""What is public by nature is kept (issue 52, build item 5): certificates, as a summary of what they say,
and base64 that decodes to plain words; a key block beside a certificate, and base64 of a credential, are not.
"""

from __future__ import annotations

import base64
import datetime
import functools
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import REDACTED, redact_object, redact_text


@functools.cache
def _certificate(name: str) -> tuple[str, str]:
    """A self-signed certificate for ``name`` and its private key, as PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(7)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    pem = certificate.public_bytes(serialization.Encoding.PEM).decode()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, private


def _body(pem: str) -> str:
    return "".join(pem.strip().splitlines()[1:-1])


def _shown(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> str:
    metadata: dict[str, Any] = {"name": "hook", "namespace": "shop", "annotations": annotations or {}}
    body = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": metadata, "spec": spec}
    document = build_instance(body, plural="gizmos").to_document()
    return document.text + repr(dict(document.metadata))


def test_a_ca_bundle_is_kept_as_what_its_certificates_say() -> None:
    """Blind trust v4: a ``caBundle`` of PEM was cut to a field's width and the cut block read as a key."""
    first, _ = _certificate("webhook.shop.svc")
    second, _ = _certificate("root-ca.acme.internal")
    shown = _shown({"caBundle": first + second, "clientCA": first})
    assert "caBundle: <2 certificates: CN=webhook.shop.svc and 1 more, until 2027-01-01>" in shown
    assert "clientCA: <certificate: CN=webhook.shop.svc, until 2027-01-01>" in shown
    assert REDACTED not in shown
    assert _body(first)[:40] not in shown  # the body says nothing an agent searches for


def test_a_ca_bundle_in_base64_as_api_fields_hold_it_is_kept_too() -> None:
    pem, _ = _certificate("admission.shop.svc")
    shown = _shown({"webhook": {"clientConfig": {"caBundle": base64.b64encode(pem.encode()).decode()}}})
    assert "<certificate: CN=admission.shop.svc, until 2027-01-01>" in shown


def test_a_certificate_beside_a_key_block_goes_with_the_key() -> None:
    pem, private = _certificate("api.shop.svc")
    for value in (pem + private, private + pem):
        kept = redact_text(value)
        assert _body(private)[:16] not in kept
        assert _body(pem)[:16] not in kept
        assert "CN=api.shop.svc" not in kept
        shown = _shown({"tls": value})
        assert _body(private)[:16] not in shown
        assert _body(pem)[:16] not in shown


def test_a_block_that_is_no_certificate_shows_none_of_its_text() -> None:
    fake = "-----BEGIN CERTIFICATE-----\nQz7mapleRiverHq42Zx9Qm2Lp7Rt4Wv8Ys3Nk\n-----END CERTIFICATE-----"
    kept = redact_text(fake)
    assert kept == "<certificate: unreadable>"
    assert "Qz7maple" not in _shown({"caBundle": fake})


@pytest.mark.parametrize(
    "words", ["team-payments", "owner: data platform", "checkout eu-west", "Équipe données", "cost-center 4711"]
)
def test_base64_of_plain_words_is_kept(words: str) -> None:
    encoded = base64.b64encode(words.encode()).decode()
    assert redact_text(encoded) == encoded
    annotations = redact_object({"metadata": {"annotations": {"acme.io/encoded-team": encoded}}})
    assert annotations.obj["metadata"]["annotations"]["acme.io/encoded-team"] == encoded
    assert encoded in _shown({"ownerEncoded": encoded})


JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvcHMiLCJpYXQiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLWJ5dGVzLWhlcmU"


@pytest.mark.parametrize(
    "decoded",
    [
        "password=hunter2",
        "password=sunshine",
        "db password is correct horse",
        JWT,
        "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2",
        "AKIAZ7VRSQ5TJN2XMY4K",
        "Qz7mapleRiverHq42",
        "kqzvxwtrbp xzkqvbnmwt",
        "admin:Sup3rS3cret",
    ],
)
def test_base64_of_a_credential_or_of_no_words_is_still_dropped(decoded: str) -> None:
    encoded = base64.b64encode(decoded.encode()).decode()
    kept = redact_text(f"owner token {encoded} set by ops")
    assert encoded not in kept
    annotations = redact_object({"metadata": {"annotations": {"acme.io/encoded": encoded}}})
    assert annotations.obj["metadata"]["annotations"]["acme.io/encoded"] != encoded
