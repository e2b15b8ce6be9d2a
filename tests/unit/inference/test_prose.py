"""Prose keeps only the tokens known to be safe (issue 52, build item 2): words in any language, names,
numbers, quantities, versions, dates, hosts and paths stay; a token that is none of them goes, whatever
words stand before it. Also: a token split across two list items or fields, and variable names in prose.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import REDACTED, redact_object, redact_text, scrub
from kubevec.inference.redaction.prose import is_prose, judge_token, keep_safe_words, word_shaped


@pytest.mark.parametrize(
    "sentence",
    [
        "The checkout service talks to the payment gateway and retries twice before giving up.",
        "L'application redémarre après l'échec de la sonde de disponibilité.",
        "La aplicación se reinicia cada 5 minutos si la base de datos no responde.",
        "Die Größe des Volumens beträgt 10Gi für die Datenbank der Bestellungen.",
        "ポッドの再起動に失敗しました。 ノードの容量を確認してください",
        "Back-off restarting failed container web in pod web-7d9f8c6b5-x2k4p",
        'Readiness probe failed: Get "http://10.0.0.12:8080/healthz": dial tcp 10.0.0.12:8080: connect: refused',
        "0/3 nodes are available: 3 Insufficient cpu, 1 node(s) had untolerated taint.",
        "Uses CrashLoopBackOff, ImagePullBackOff, PgBouncer, iSCSI, OAuth2, HTTP2, IPv6, X509, Ed25519 and CRDs.",
        "sh -c exec nginx -g 'daemon off;' --config=/etc/nginx/nginx.conf 2>&1",
    ],
)
def test_prose_in_any_language_is_kept_whole(sentence: str) -> None:
    assert keep_safe_words(sentence) == sentence
    assert redact_text(sentence) == sentence


@pytest.mark.parametrize(
    "token",
    [
        "web-7d9f8c6b5-x2k4p",  # a Kubernetes name with its generated suffixes
        "checkout-canary",
        "500Mi",
        "1.5Gi",
        "250m",
        "v1.2.3",
        "1.29",
        "v1beta1",
        "2024-01-15T10:30:00Z",
        "30s",
        "1h30m",
        "10.0.0.12",
        "fe80::1",
        "api.eu-west-1.example.com",
        "/var/lib/postgresql/data",
        "ops@example.com",  # contact details, not a credential
        "sha256:5ba8a9e8f6f5c6b4f1ef9fd0d5b4f1c54d4c1b64e2d6f4c6a4b7f1c5f4b1e2d3",
        "3ce2f27",  # a short commit
        "amd64",
        "DB_HOST",
        "app.kubernetes.io/name=web",
        "--max-connections=200",
        "50%",
        "${DB_HOST}",
        "Größe",
        "l'échec",
    ],
)
def test_each_kind_of_safe_token_is_kept(token: str) -> None:
    assert judge_token(token) == token


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("break glass: Zx9Qm2Lp7Rt4", "Zx9Qm2Lp7Rt4"),
        ("la clave es Qz7mapleRiver", "Qz7mapleRiver"),
        ("recovery code 8F3K-2LQ9-XX7P", "8F3K"),
        ("emergency access via dGhpcyBpcyBhIHNlY3JldCBrZXk= for the night shift", "dGhpcyBpcyBh"),
        (
            "fallback signing value 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 in use",
            "9f86d08188",
        ),
        ("the on-call phrase is xKqPzLwTbV for now", "xKqPzLwTbV"),
    ],
)
def test_a_token_that_is_no_word_goes_without_any_cue(text: str, secret: str) -> None:
    judged = redact_text(text)
    assert secret not in judged
    assert REDACTED in judged
    assert judged.split()[0] == text.split()[0]  # the words around it stay


def test_app_passwords_in_groups_of_four_go_and_four_letter_words_stay() -> None:
    """Decided: four groups of four lowercase letters go together when two or more do not read as words
    (no vowel, a pair no word holds, an impossible start); a sentence of short words stays."""
    assert redact_text("mail relay app password abcd efgh ijkl mnop") == (
        f"mail relay app password {REDACTED} {REDACTED} {REDACTED} {REDACTED}"
    )
    assert redact_text("smtp login uses qwzx rtpk mvbn lkjh daily") == (
        f"smtp login uses {REDACTED} {REDACTED} {REDACTED} {REDACTED} daily"
    )
    plain = "this will take some time when each node runs full sync"
    assert redact_text(plain) == plain


def test_a_signed_url_keeps_scheme_host_and_path_and_loses_its_signature() -> None:
    s3 = (
        "download the dump from https://backups.s3.eu-west-1.amazonaws.com/prod/db.sql.gz?"
        "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240115&X-Amz-Expires=3600"
        "&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024 before Friday"
    )
    judged = redact_text(s3)
    assert "https://backups.s3.eu-west-1.amazonaws.com/prod/db.sql.gz?" in judged
    assert "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024" not in judged
    assert "AKIAIOSFODNN7EXAMPLE" not in judged
    assert f"X-Amz-Signature={REDACTED}" in judged
    assert judged.endswith("before Friday")
    sas = "the export lands in https://acme.blob.core.windows.net/exports/a.csv?sv=2022-11-02&se=2024-12-31&sp=r&sig=Qm9vM2xhUGxvVGs%3D daily"
    judged = redact_text(sas)
    assert "https://acme.blob.core.windows.net/exports/a.csv?" in judged
    assert "Qm9vM2xhUGxvVGs" not in judged
    assert f"sig={REDACTED}" in judged


def test_harmless_query_keys_keep_their_values() -> None:
    text = "see the guide at https://docs.example.com/install?page=2&lang=en&ref=main for details"
    assert redact_text(text) == text


def test_a_sentence_with_a_kubernetes_name_and_a_quantity_is_kept_whole() -> None:
    text = "Pod web-7d9f8c6b5-x2k4p on node ip-10-0-1-23.ec2.internal requests 500Mi memory and 250m CPU."
    assert redact_text(text) == text


def test_one_or_two_tokens_are_no_prose_and_are_left_to_the_deny_rules() -> None:
    assert not is_prose("Zx9Qm2Lp7Rt4")
    assert not is_prose("token Zx9Qm2Lp7Rt4")
    assert is_prose("break glass: Zx9Qm2Lp7Rt4")
    assert not is_prose("--a=1 --b=2 --c=3 -v")  # a command line of flags: judged by the command-line rules
    assert keep_safe_words("Zx9Qm2Lp7Rt4") == "Zx9Qm2Lp7Rt4"


@pytest.mark.parametrize(
    ("word", "shaped"),
    [
        ("CrashLoopBackOff", True),
        ("labelNameLengthLimit", True),
        ("KrbCCacheSecret", True),
        ("Donaudampfschifffahrtsgesellschaft", True),
        ("xKqPzL", False),
        ("bXaUeTkLwQ", False),
        ("sqlcmd", True),  # one case, letters only: kept whatever its vowels
        ("QmZxTrWvBnKl", False),
    ],
)
def test_a_word_has_the_shape_of_one(word: str, shaped: bool) -> None:
    assert word_shaped(word) is shaped


def test_a_description_annotation_in_prose_loses_its_secret_and_keeps_its_words() -> None:
    body: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {
            "name": "w",
            "annotations": {"acme.io/description": "Ops note, break glass: Zx9Qm2Lp7Rt4 (rotate monthly)"},
        },
    }
    kept = redact_object(body).obj["metadata"]["annotations"]["acme.io/description"]
    assert kept == f"Ops note, break glass: {REDACTED} (rotate monthly)"


def test_a_token_split_across_two_list_items_goes_whole() -> None:
    assert scrub(["ghp_abc123", "def456ghi789jkl012mno345pqr678stu9"]) == [REDACTED, REDACTED]
    assert scrub({"part1": "wJalrXUtnFEMI", "part2": "K7MDENGbPxRfiCY"}) == {"part1": REDACTED, "part2": REDACTED}


def test_ordinary_neighbours_are_not_read_as_one_token() -> None:
    ordinary: list[Any] = ["sg-0a1b2c3d", "subnet-0123abcd", "amd64", "arm64", "nginx", "redis"]
    assert scrub(ordinary) == ordinary
    resources = {"cpu": "500m", "memory": "1Gi", "name": "web", "image": "nginx:1.25"}
    assert scrub(resources) == resources
    # a user name beside its dropped password is no half of it
    assert scrub({"user": "admin", "pw": "wJalrXUtnFEMIK7MDENGbPxRfiCY"}) == {"user": "admin", "pw": REDACTED}


def test_variable_names_in_a_names_list_are_not_values() -> None:
    """Regression: the final text pass read ``PASSWORD DB_PASSWORD`` as a password and its value."""
    assert redact_text("env HOME PASSWORD DB_PASSWORD USER", raw=False) == "env HOME PASSWORD DB_PASSWORD USER"
    assert redact_text("PASSWORD Hunter2x", raw=False) == f"PASSWORD {REDACTED}"
    env = [
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
        {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
    ]
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx", "env": env}]}}},
    }
    text = build_instance(body, plural="deployments").to_document().text
    assert "env PASSWORD DB_PASSWORD" in text


def test_a_label_value_written_as_a_sentence_without_spaces_keeps_its_safe_parts() -> None:
    body: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {
            "name": "w",
            "labels": {
                "acme.io/note": "break.glass.Zx9Qm2Lp7Rt4",  # dots: not one chosen token
                "app.kubernetes.io/instance": "web-7d9f8c6b5-x2k4p",
                "node": "ip-10-0-1-23.ec2.internal",
                "image-id": "ami-0abcdef1234567890",
                "chart": "ingress-nginx-4.7.1",
            },
        },
    }
    labels = redact_object(body).obj["metadata"]["labels"]
    assert labels["acme.io/note"] == f"break.glass.{REDACTED}"
    assert {k: v for k, v in labels.items() if k != "acme.io/note"} == {
        k: v for k, v in body["metadata"]["labels"].items() if k != "acme.io/note"
    }


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the PIN is 4821 for the lobby door", "4821"),  # a number is safe in prose: the cue says otherwise
        ("the API key is hunter2", "hunter2"),  # a short lowercase name is safe in prose: the cue says otherwise
        ("access token is abc123def", "abc123def"),
        ("clé API : hunter2x", "hunter2x"),
        ("Schlüssel lautet hunter2x", "hunter2x"),
    ],
)
def test_what_else_a_secret_is_called_in_prose_introduces_it(text: str, secret: str) -> None:
    assert secret not in redact_text(text)


@pytest.mark.parametrize(
    "text", ["token expires in 5m", "the token is rotated daily", "api key rotation happens weekly"]
)
def test_those_words_before_a_plain_word_stay(text: str) -> None:
    assert redact_text(text) == text
    # rendered text writes `token: ACME challenge token` as its own field layout: those cues read raw strings only
    assert redact_text("token: ACME challenge token for this challenge.", raw=False).startswith("token: ACME")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Maintainer: billing team. The vault entry is stale, until then log in with m0nk3yb4rs", "m0nk3yb4rs"),
        ("Ask #sre before changing this; the old console still takes dr4g0nfly", "dr4g0nfly"),
        ("Temporary access for the migration window: Sup3rS3cret until Friday", "Sup3rS3cret"),
        ("Contact platform on-call, fallback login is w1nterf4ll-prod for now", "w1nterf4ll"),
        ("Shared staging account works with passw0rd9 until the SSO fix lands", "passw0rd9"),
    ],
)
def test_a_word_spelled_with_digits_for_letters_goes_from_prose(text: str, secret: str) -> None:
    """Blind trust v4: a password made from words with digits for letters (a leet spelling) was kept in a
    contact annotation: lowercase letters and digits read as a generated name's suffix."""
    kept = redact_text(text)
    assert secret not in kept
    assert kept.split()[:2] == text.split()[:2]  # the words around it stay


@pytest.mark.parametrize(
    "label",
    ["admin.Dr4g0nSl4yer-42", "ops_w1nterf4ll_7", "svc.m0nk3yb4rs", "S3cr3tPass"],
)
def test_a_label_value_with_a_word_spelled_in_digits_loses_that_part(label: str) -> None:
    body = {"metadata": {"name": "w", "labels": {"emergency-access": label, "app": "web"}}}
    labels = redact_object(body).obj["metadata"]["labels"]
    assert REDACTED in labels["emergency-access"]
    assert labels["app"] == "web"


@pytest.mark.parametrize(
    "token",
    ["k8s", "k3s", "g4dn", "i18n", "l10n", "v1beta1", "utf8mb4", "log4j", "neo4j", "sha1sum", "s3website",
     "http1MaxPendingRequests", "rate5m", "burnrate1h", "pop3s", "consecutive5xxErrors", "web01", "redis6",
     "7d9f8c6b5", "x2k4p", "3f4a2b1c", "UseG1GC", "S3EncryptionOptions", "amd64", "Ed25519"],
)  # fmt: skip
def test_names_with_digits_at_a_boundary_are_no_words_spelled_in_digits(token: str) -> None:
    sentence = f"The field {token} is read by the controller on every sync."
    assert redact_text(sentence) == sentence
    body = {"metadata": {"name": "w", "labels": {"tier": f"cache.{token}-1"}}}
    assert redact_object(body).obj["metadata"]["labels"]["tier"] == f"cache.{token}-1"
