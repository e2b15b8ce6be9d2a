"""Redaction: credentials by name and by value, for every value type, and properties that must hold."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inference.redaction import (
    REDACTED,
    is_credential_name,
    name_words,
    redact_object,
    redact_text,
    scrub,
)

CANARY = "Kv9canaryQ7"


@pytest.mark.parametrize(
    "name",
    [
        "password",
        "dbPassword",
        "db_password",
        "DB-PASSWORD",
        "passwordValue",
        "passwordList",
        "pwd",
        "passwd",
        "secret",
        "clientSecret",
        "client_secret",
        "existingSecret",
        "secretAccessKey",
        "awsAccessKeyId",
        "AWS_ACCESS_KEY_ID",
        "accessKey",
        "apiKey",
        "api-key",
        "apikey",
        "x-api-key",
        "privateKey",
        "sshPrivateKey",
        "tlsKey",
        "token",
        "authToken",
        "bearerToken",
        "refreshTokens",
        "connectionString",
        "connection_string",
        "dsn",
        "sentryDsn",
        "credentials",
        "jwt",
        "basicAuth",
        "webhookUrl",
        "kubeconfig",
        "storage.accountKey",
        "dbPass",
        "smtp_pass",
        "truststorePass",
        "ADMIN-PASS",
        "rootPw",
        "PGPASSWORD",
        "csrftoken",
        "hmacKey",
    ],
)
def test_credential_names(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "secretName",
        "secretRef",
        "passwordSecretRef",
        "tokenSecretRef",
        "secretKeyRef",
        "credentialsSecretName",
        "tokenUrl",
        "tokenEndpoint",
        "tokenTTL",
        "passwordPolicy",
        "bypass",
        "tokenizer",
        "keyspace",
        "size",
        "image",
        "replicas",
        "key",
        "author",
        "secretsStoreProvider",
        "passThrough",
        "passHostHeader",
        "compass",
        "pwdSecretRef",
    ],
)
def test_names_that_only_refer_to_credentials_or_are_unrelated(name: str) -> None:
    assert not is_credential_name(name)


def test_name_words_split_every_convention() -> None:
    assert name_words("secretAccessKey") == ("secret", "access", "key")
    assert name_words("AWS_ACCESS_KEY_ID") == ("aws", "access", "key", "id")
    assert name_words("x-api-key") == ("x", "api", "key")
    assert name_words("TLSKey") == ("tls", "key")


@pytest.mark.parametrize(
    "value",
    [
        f"postgres://admin:{CANARY}@db.prod:5432/app",
        f"https://{CANARY}@github.com/acme/repo.git",
        f"curl -H 'Authorization: Basic {CANARY}=='",
        f"header Authorization: Bearer {CANARY}xyz",
        f"send Bearer eyJ{CANARY}.eyJzdWIiOiIxIn0.abc123 with it",
        f"token eyJhbGciOiJIUzI1NiJ9.eyJ{CANARY}.sig",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{CANARY}\n-----END PGP PRIVATE KEY BLOCK-----",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl{CANARY}\n-----END OPENSSH PRIVATE KEY-----",
        f"prefix -----BEGIN RSA PRIVATE KEY-----\n{CANARY} (truncated",
        f"use ghp_{CANARY}abcdefghijklmnopqrstuvwxyz123 for the repo",
        f"github_pat_11{CANARY}abcdefghijklmn",
        f"slack xoxb-123456789-{CANARY}",
        f"key AKIA{CANARY.upper()[:11]}ABCDE here",
        f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={CANARY}%2Bz%3D",
        f"https://hooks.slack.com/services/T000/B000/{CANARY}",
        f"Server=db;User Id=sa;Password={CANARY};",
        f"DATABASE_URL=mysql://root:{CANARY}@mysql/app",
        f"sk-proj-{CANARY}abcdefghijklmnopq",
        f"sk_live_{CANARY}abcdefghijk",
        f"glpat-{CANARY}abcdefghijkl",
        f"AIzaSy{CANARY}abcdefghijklmnopqrstuvw",
        f"DB_PASSWORD={CANARY}",
        f"export DB_PASS={CANARY} && run",
        f"PGPASSWORD={CANARY} psql -h db",
        f"--admin-pass={CANARY}",
        f"aws_secret_access_key = {CANARY}",
        f"db_password: {CANARY}\nuser: app",
        f'config: {{"password": "{CANARY}", "user": "app"}}',
        f"{{'apiKey': '{CANARY}'}}",
        f"X-Api-Key: {CANARY}",
        f"curl -H 'Private-Token: {CANARY}' https://gitlab",
    ],
)
def test_values_that_are_credentials_anywhere_in_a_string(value: str) -> None:
    redacted = redact_text(value)
    assert CANARY not in redacted
    assert CANARY.upper()[:11] not in redacted
    assert REDACTED in redacted


@pytest.mark.parametrize(
    "value",
    [
        "Bearer token authentication for the API server",
        "Basic authentication is disabled",
        "https://example.com/docs/install",
        "postgres cluster with 3 replicas",
        "Token rotation happens every hour",
        "user@example.com",
        "Secret name that holds the token",
        "Provider of the Security Token Service.",
        "replicas=3 mode=fast tokenUrl=https://auth.example.com/token",
        "secretName: db-creds, passwordSecretRef: admin",
        "https://example.com/search?q=kubernetes&page=2",
    ],
)
def test_ordinary_text_is_kept(value: str) -> None:
    assert redact_text(value) == value


def test_rendered_text_keeps_its_own_field_colon_layout() -> None:
    rendered = "token: ACME challenge token for this challenge.; authorization: settings for this user"
    assert redact_text(rendered, raw=False) == rendered
    assert CANARY not in redact_text(f"config: |\n  password: {CANARY}\n  user: app")


def test_every_value_type_under_a_credential_name_is_dropped() -> None:
    spec = {
        "password": 972089767740,
        "passwordList": [CANARY, "two"],
        "apiKey": True,
        "credentials": {"accessKeyId": CANARY, "secretRef": {"name": "aws-creds", "key": "secret"}},
        "basicAuth": {"username": "admin", "password": CANARY},
        "passwordSecretRef": {"name": "db-pass", "key": "password"},
        "size": "large",
    }
    out = scrub(spec)
    dumped = json.dumps(out)
    assert CANARY not in dumped
    assert "972089767740" not in dumped
    assert out["password"] == REDACTED
    assert out["passwordList"] == REDACTED
    assert out["apiKey"] == REDACTED
    assert out["credentials"]["secretRef"] == {"name": "aws-creds", "key": REDACTED}
    assert out["passwordSecretRef"] == {"name": "db-pass", "key": "password"}
    assert out["size"] == "large"


def test_the_value_after_a_credential_flag_is_dropped() -> None:
    """A command line as a list: ``--password`` is kept, the next item is the password."""
    args = ["--password", CANARY, "--api-key", CANARY, "--verbose", "-v", "--token", "--log-level", "debug"]
    assert scrub({"args": args}) == {
        "args": ["--password", REDACTED, "--api-key", REDACTED, "--verbose", "-v", "--token", "--log-level", "debug"]
    }


def test_pairs_are_judged_by_name_in_rendered_text_too() -> None:
    assert redact_text(f"args: --db-password={CANARY}, --port=5432", raw=False) == (
        f"args: --db-password={REDACTED}, --port=5432"
    )


def test_high_entropy_strings_under_suspicious_names() -> None:
    out = scrub({"signature": "q8Zr3LxV0pT7mN2bW5yK", "hmacSeed": "short", "signatureAlgorithm": "HS256"})
    assert out == {"signature": REDACTED, "hmacSeed": "short", "signatureAlgorithm": "HS256"}


def test_annotations_and_labels_are_judged_by_name_and_value() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Thing",
        "metadata": {
            "name": "x",
            "annotations": {
                "example.com/api-token": CANARY,
                "example.com/endpoint": f"https://u:{CANARY}@host",
                "example.com/description": "Serves payments",
            },
            "labels": {"app": "pay", "aws-key": f"AKIA{'A' * 16}", "tier": "api"},
        },
    }
    out = redact_object(obj).obj  # type: ignore[arg-type]
    assert CANARY not in json.dumps(out)
    assert "AKIA" not in json.dumps(out)
    assert out["metadata"]["annotations"]["example.com/description"] == "Serves payments"
    assert out["metadata"]["labels"]["app"] == "pay"


def test_data_values_are_gone_and_their_key_names_kept_apart() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db"},
        "data": {"password": "aHVudGVyMg==", "username": "YWRtaW4="},
        "stringData": {"token": CANARY},
    }
    redacted = redact_object(secret)  # type: ignore[arg-type]
    assert redacted.data_keys == ("password", "token", "username")
    assert set(redacted.obj) == {"apiVersion", "kind", "metadata"}
    assert CANARY not in json.dumps(redacted.obj)


# -- properties -------------------------------------------------------------------------------------

_words = st.sampled_from(["size", "replicas", "image", "region", "mode", "name", "host", "port", "tier", "zone"])
_credential_core = st.sampled_from(
    ["password", "secret", "token", "apiKey", "accessKey", "privateKey", "credentials", "dsn", "pwd", "clientSecret"]
)


@st.composite
def _credential_names(draw: st.DrawFn) -> str:
    """A credential word with a prefix and a suffix in one of the naming conventions."""
    prefix = draw(st.sampled_from(["", "db", "admin", "aws", "primary", "s3"]))
    core = draw(_credential_core)
    suffix = draw(st.sampled_from(["", "value", "data", "list", "plain", "raw"]))
    style = draw(st.sampled_from(["camel", "snake", "kebab", "upper"]))
    parts = [p for p in (prefix, core, suffix) if p]
    words = [w for p in parts for w in name_words(p)]
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    joiner = {"snake": "_", "kebab": "-", "upper": "_"}[style]
    joined = joiner.join(words)
    return joined.upper() if style == "upper" else joined


_json_leaf = st.one_of(st.integers(), st.booleans(), st.text(alphabet=string.ascii_lowercase + " ", max_size=20))
_json = st.recursive(
    _json_leaf,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_words, children, max_size=4)),
    max_leaves=20,
)
_secret_values = st.one_of(
    st.just(CANARY),
    st.just(972089767740),
    st.lists(st.just(CANARY), min_size=1, max_size=3),
    st.fixed_dictionaries({"value": st.just(CANARY)}),
)


def _insert(tree: Any, key: str, value: Any, path: list[int]) -> Any:
    """Put ``key: value`` into the first dict reached by following ``path`` (or wrap the tree)."""
    if isinstance(tree, dict):
        if path and tree:
            child = sorted(tree)[path[0] % len(tree)]
            return {**tree, child: _insert(tree[child], key, value, path[1:])}
        return {**tree, key: value}
    if isinstance(tree, list) and tree and path:
        index = path[0] % len(tree)
        return [*tree[:index], _insert(tree[index], key, value, path[1:]), *tree[index + 1 :]]
    return {"wrapped": tree, key: value}


@settings(max_examples=300, deadline=None)
@given(tree=_json, key=_credential_names(), value=_secret_values, path=st.lists(st.integers(0, 9), max_size=5))
def test_property_a_credential_under_a_credential_name_never_survives(
    tree: Any, key: str, value: Any, path: list[int]
) -> None:
    assert is_credential_name(key), key
    dumped = json.dumps(scrub(_insert(tree, key, value, path)))
    assert CANARY not in dumped
    assert "972089767740" not in dumped


_value_secrets = st.sampled_from(
    [
        "postgres://u:{c}@h/db",
        "Bearer eyJ{c}.eyJ1.x",
        "Authorization: Basic {c}==",
        "-----BEGIN EC PRIVATE KEY-----\n{c}\n-----END EC PRIVATE KEY-----",
        "ghp_{c}abcdefghijklmnopqrstuvwxyz",
        "xoxb-1-{c}",
        "https://hooks.slack.com/services/T1/B1/{c}",
        "x?sig={c}&sv=1",
        "password={c}",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    tree=_json,
    key=_words,
    template=_value_secrets,
    before=st.text(alphabet=string.ascii_letters + " .,", max_size=30),
    after=st.text(alphabet=string.ascii_letters + " .,", max_size=30),
    path=st.lists(st.integers(0, 9), max_size=5),
)
def test_property_a_credential_shaped_value_never_survives_anywhere(
    tree: Any, key: str, template: str, before: str, after: str, path: list[int]
) -> None:
    value = f"{before} {template.format(c=CANARY)} {after}"
    dumped = json.dumps(scrub(_insert(tree, key, value, path)))
    assert CANARY not in dumped


@settings(max_examples=200, deadline=None)
@given(tree=_json)
def test_property_scrub_keeps_plain_data_and_is_idempotent(tree: Any) -> None:
    once = scrub(tree)
    assert once == tree  # lowercase words, numbers and booleans under ordinary names are kept as they are
    assert scrub(once) == once


# -- v3: shapes that reached documents before (issue 27), and what must stay searchable ------------

HF = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3f"


@pytest.mark.parametrize(
    "text",
    [
        f"mysql -uroot -p{CANARY} -h db shop",
        f'sh -c "mysqldump -u root -p{CANARY} shop > /backup/shop.sql"',
        f"mysql --user=root -p{CANARY}",
        f'sh -c "pg_dump --password {CANARY} shop"',
        f"run-backup --db-password {CANARY} --verbose",
        f"curl -u admin:{CANARY} https://api.example.com/health",
        f"curl --user admin:{CANARY} https://api.example.com",
        f"database:\n  host: db\n  password: {CANARY}\n  port: 5432",
        f"auth:\n  password: |\n    {CANARY}\n  user: app",
        f'{{"password": {{"value": "{CANARY}"}}, "user": "app"}}',
        f'[{{"name": "db", "credentials": {{"secret": "{CANARY}"}}}}]',
        f"HF token {HF}",
        f"export VAULT_TOKEN=hvs.{CANARY}abcdefghijklmnopqrstu",
    ],
)
def test_v3_shapes_lose_the_credential_and_keep_the_rest(text: str) -> None:
    out = redact_text(text)
    assert CANARY not in out, out
    assert HF not in out
    assert REDACTED in out


def test_v3_the_rest_of_a_command_line_stays_searchable() -> None:
    assert redact_text(f"mysql -uroot -p{CANARY} -h db shop") == f"mysql -uroot -p{REDACTED} -h db shop"
    assert redact_text(f"curl -u admin:{CANARY} https://x.example") == f"curl -u admin:{REDACTED} https://x.example"
    assert redact_text(f"backup --password {CANARY} --verbose") == f"backup --password {REDACTED} --verbose"
    nested = redact_text(f"database:\n  host: db\n  password: {CANARY}")
    assert "host: db" in nested


@pytest.mark.parametrize(
    ("obj", "leaked"),
    [
        ({"pin": 4821}, "4821"),
        ({"simPin": "0042"}, "0042"),
        ({"otpSeed": "JBSWY3DPEHPK3PXP"}, "JBSWY3DPEHPK3PXP"),
        ({"totp": "JBSWY3DPEHPK3PXP"}, "JBSWY3DPEHPK3PXP"),
        ({"recoveryCodes": ["a1b2-c3d4", "e5f6-a7b8"]}, "a1b2-c3d4"),
        ({"args": ["sh", "-c", f"mysql -uroot -p{CANARY}"]}, CANARY),
    ],
)
def test_v3_short_credentials_under_credential_names_are_dropped(obj: dict[str, Any], leaked: str) -> None:
    assert leaked not in json.dumps(scrub(obj))


@pytest.mark.parametrize(
    "text",
    [
        "ghcr.io/acme/token-service:1.4.2",
        "registry.example.com/secret-manager:2.0.0",
        "ssh://git@github.com/acme/platform.git",
        "git+ssh://git@gitlab.com/acme/infra.git",
        "has-secret=true",
        "uses-token=false",
        "docker run -p 8080:80 nginx",
        "ssh -p 2222 deploy@bastion",
        "--password-file /etc/app/password",
        "kubectl get secret db-creds -o name",
        "connect to db:5432 with secretName app-db",
        "see https://docs.example.com/tokens?page=2",
        "mysql -h db -P 3306 --protocol tcp",
    ],
)
def test_v3_false_positives_are_kept_whole(text: str) -> None:
    assert redact_text(text) == text


def test_v3_references_and_facts_about_credentials_are_kept() -> None:
    obj = {
        "secretName": "api-tls",
        "passwordSecretRef": {"name": "db", "key": "password"},
        "hasSecret": True,
        "enableBasicAuth": False,
        "image": "ghcr.io/acme/token-service:1.4.2",
        "repo": "ssh://git@github.com/acme/platform.git",
    }
    assert scrub(obj) == obj
    labels = redact_object(
        {"kind": "Deployment", "metadata": {"name": "x", "labels": {"has-secret": "true", "api-token": "abc123xyz"}}}
    )
    assert labels.obj["metadata"]["labels"] == {"has-secret": "true", "api-token": REDACTED}
