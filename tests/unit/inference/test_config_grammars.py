"""Config text in a field judged as its format is written: each value by its name, the shape kept.

Written from the formats of issue 52's "credentials as files are written" (netrc, msmtprc, postfix
sasl_passwd, Kafka JAAS, Telegraf TOML, INI, pgbouncer userlist, Java properties, HCL variables),
not from any held-out placement.
"""

from __future__ import annotations

import time

import pytest

from kubevec.inference.redaction import REDACTED, redact_text
from kubevec.inference.redaction.gate import _judge_setting
from kubevec.inference.redaction.grammars import MAX_CONFIG_CHARS, redact_config

#: (format, text, secrets that must go, ordinary values that must stay)
FORMATS: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "netrc",
        "machine api.example.com login deploy password Zq8rT2mW\n"
        "# the mirror\nmachine git.example.com\n  login bot\n  password hunter2now\n  account acct9Secret\n",
        ("Zq8rT2mW", "hunter2now", "acct9Secret"),
        ("api.example.com", "login deploy", "git.example.com", "login bot"),
    ),
    (
        "netrc one line, quoted",
        'machine ci.example.org login "ci bot" password "pa ss word"',
        ("pa ss word",),
        ("ci.example.org", '"ci bot"'),
    ),
    (
        "msmtprc",
        "defaults\nauth on\ntls on\naccount default\nhost smtp.example.com\nport 587\n"
        "from alerts@example.com\nuser alerts@example.com\npassword Wint3rIsC0ming\n",
        ("Wint3rIsC0ming",),
        ("auth on", "tls on", "host smtp.example.com", "port 587", "user alerts@example.com"),
    ),
    (
        "postfix sasl_passwd",
        "# relays\n[smtp.sendgrid.net]:587 apikey:SG9xZ2pqwlkLmn\nsmtp.other.org relay2:plainpw99\n"
        "@example.com mailer:Tr0ub4dor&3\n",
        ("SG9xZ2pqwlkLmn", "plainpw99", "Tr0ub4dor&3"),
        ("[smtp.sendgrid.net]:587 apikey:", "smtp.other.org relay2:", "@example.com mailer:"),
    ),
    (
        "postfix sasl_passwd, one line",
        "[smtp.example.com]:587 relayuser:lowercasepw",
        ("lowercasepw",),
        ("[smtp.example.com]:587 relayuser:",),
    ),
    (
        "postfix sasl_passwd written by a command, a service name for the port",
        'echo "[smtp.example.com]:587 relay:lowpw9" > /etc/postfix/sasl_passwd && postmap /etc/postfix/sasl_passwd\n'
        "[mail.example.org]:submission other:lowpw10",
        ("lowpw9", "lowpw10"),
        ("postmap /etc/postfix/sasl_passwd", "[mail.example.org]:submission other:"),
    ),
    (
        "Kafka JAAS, one line",
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alicepw";',
        ("admin-secret", "alicepw"),
        ('username="admin"', "PlainLoginModule required"),
    ),
    (
        "Kafka JAAS sections",
        "KafkaServer {\n  org.apache.kafka.common.security.plain.PlainLoginModule required\n"
        '  username="broker"\n  password="brokerpass"\n  user_broker="brokerpass"\n  user_bob="bobsecret";\n};\n'
        "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        '  username="zk" password="zkpass";\n};\n',
        ("brokerpass", "bobsecret", "zkpass"),
        ('username="broker"', 'username="zk"', "KafkaServer {"),
    ),
    (
        "Telegraf TOML",
        '[agent]\n  interval = "10s"\n[[outputs.influxdb_v2]]\n  urls = ["http://influx:8086"]\n'
        '  organization = "acme"\n  bucket = "metrics"\n  auth = { token = "lowercasetoken" }\n'
        '[[outputs.http]]\n  url = "https://x.example.com"\n  headers = { Authorization = "Bearer abcdefgh12" }\n'
        '[[inputs.mysql]]\n  servers = ["root:rootpw22@tcp(127.0.0.1:3306)/"]\n',
        ("lowercasetoken", "abcdefgh12", "rootpw22"),
        ('interval = "10s"', 'organization = "acme"', 'bucket = "metrics"', "http://influx:8086", "127.0.0.1:3306"),
    ),
    (
        "TOML table named for a credential",
        '[database]\nhost = "db"\n[database.credentials]\nuser = "app"\nvalue = "plainvalue"\n',
        ("plainvalue",),
        ('host = "db"',),
    ),
    (
        "INI sections",
        "[db]\nhost = db.example.com\nport = 5432\npassword = hunter2\n\n[cache]\nurl = redis://cache:6379\n"
        "[smtp]\nuser: mailer\npass: lowercasesmtp\n",
        ("hunter2", "lowercasesmtp"),
        ("host = db.example.com", "port = 5432", "url = redis://cache:6379", "user: mailer"),
    ),
    (
        "INI continuation line",
        "[ldap]\nbind_dn = cn=admin,dc=example,dc=org\nbind_password = first\n  second\nport = 389\n",
        ("first", "second"),
        ("port = 389", "bind_dn = cn=admin,dc=example,dc=org"),
    ),
    (
        "pgbouncer userlist",
        '"admin" "md5a3c6d2e8f1b04c7e9d5a2b1c3e4f5a6b"\n'
        '"app" "SCRAM-SHA-256$4096:c2FsdA==$abcDEF123=:xyzXYZ789="\n"report" "readonlypw"\n',
        ("md5a3c6d2e8f1b04c7e9d5a2b1c3e4f5a6b", "SCRAM-SHA-256$4096", "xyzXYZ789", "readonlypw"),
        ('"admin"', '"app"', '"report"'),
    ),
    (
        "pgbouncer userlist, one line",
        '"report" "readonlypw"',
        ("readonlypw",),
        ('"report"',),
    ),
    (
        "Java properties with ':'",
        "db.url: jdbc:postgresql://db:5432/app\ndb.user: app\ndb.password: lowercasepw\n",
        ("lowercasepw",),
        ("jdbc:postgresql://db:5432/app", "db.user: app"),
    ),
    (
        "Java properties with spaces and a continued line",
        "# app\ndb.url jdbc:postgresql://db:5432/app\ndb.user app\nmail.smtp.pass sunnyday\n"
        "db.password first\\\n    second\npool.size 10\nimage.repository nginx:1.25\n",
        ("sunnyday", "first", "second"),
        ("db.user app", "pool.size 10", "jdbc:postgresql://db:5432/app", "image.repository nginx:1.25"),
    ),
    (
        "HCL variables",
        'variable "db_password" {\n  type    = string\n  default = "lowercasepw"\n  sensitive = true\n}\n'
        'variable "region" {\n  default = "eu-west-1"\n}\n'
        'variable "admin" {\n  default = {\n    name = "root"\n    password = "adminpw"\n  }\n}\n',
        ("lowercasepw", "adminpw"),
        ('default = "eu-west-1"', "type    = string", "sensitive = true", 'name = "root"'),
    ),
    (
        "Kafka client properties holding a JAAS entry",
        "bootstrap.servers=kafka:9092\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security"
        '.plain.PlainLoginModule required username="u" password="p1pass" user_x="p2pass";\n'
        "ssl.truststore.password truststorepw\n",
        ("p1pass", "p2pass", "truststorepw"),
        ("bootstrap.servers=kafka:9092", "sasl.mechanism=PLAIN", 'username="u"'),
    ),
    (
        "postfix main.cf beside its sasl_passwd entry",
        "relayhost = [smtp.example.com]:587\nsmtp_sasl_auth_enable = yes\n[smtp.example.com]:587 mailer:lowpw\n",
        ("lowpw",),
        ("relayhost = [smtp.example.com]:587", "smtp_sasl_auth_enable = yes"),
    ),
    (
        "TOML inline table over several lines (Telegraf reads it; tomllib does not)",
        '[[outputs.influxdb]]\n  urls = ["http://influx:8086"]\n  auth = {\n    token = "lowtoken",\n  }\n',
        ("lowtoken",),
        ("http://influx:8086",),
    ),
    (
        "HCL with a block comment",
        '/* credentials */\nvariable "pw" {\n  default = "lowpw"\n}\n',
        ("lowpw",),
        ("/* credentials */",),
    ),
    (
        "HCL, one line",
        'variable "api_key" { default = "lowercasekey" }',
        ("lowercasekey",),
        ('variable "api_key"',),
    ),
    (
        "HCL provider and heredoc",
        'provider "aws" {\n  region     = "us-east-1"\n  access_key = "plainaccess"\n  secret_key = "plainsecret"\n}\n'
        'resource "x" "y" {\n  private_key = <<EOT\nkeymaterialline\nEOT\n  tags = merge(var.tags, { Name = "web" })\n}\n',
        ("plainaccess", "plainsecret", "keymaterialline"),
        ('region     = "us-east-1"', 'Name = "web"'),
    ),
]


@pytest.mark.parametrize(("text", "secrets", "kept"), [f[1:] for f in FORMATS], ids=[f[0] for f in FORMATS])
def test_a_credential_in_config_text_goes_and_the_rest_stays(
    text: str, secrets: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    judged = redact_text(text)
    for secret in secrets:
        assert secret not in judged, (secret, judged)
    for value in kept:
        assert value in judged, (value, judged)
    assert REDACTED in judged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[db]\nhost = db.example.com\npassword = hunter2\n", f"[db]\nhost = db.example.com\npassword = {REDACTED}\n"),
        ('auth = { token = "lowercasetoken" }\nbucket = "b"', f'auth = {{ token = "{REDACTED}" }}\nbucket = "b"'),
        ('"app" "readonlypw"\n"ops" ""', f'"app" "{REDACTED}"\n"ops" ""'),
        ("[relay]:587 u:pw123456\n", f"[relay]:587 u:{REDACTED}\n"),
    ],
)
def test_the_config_keeps_its_shape(text: str, expected: str) -> None:
    """The key, its separator and quotes stay; only the value becomes the gate's marker."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "[db]\nhost = db.example.com\nport = 5432\nuser = app\n",
        'organization = "acme"\nbucket = "metrics"\ninterval = "10s"\n',
        "defaults\nauth on\ntls on\nhost smtp.example.com\nport 587\n",
        'variable "region" {\n  default = "eu-west-1"\n}\nvariable "size" {\n  default = 3\n}\n',
        "db.url=jdbc:postgresql://pg/app\ndb.user=app\npool.size=10\n",
        "[db]\npassword = ${DB_PASSWORD}\nauth = false\n",
        "defaults\nauth plain\ntls on\nlogfile ~/.msmtp.log\n",
        "[pgbouncer]\nauth_type = scram-sha-256\nauth_file = /etc/pgbouncer/userlist.txt\nlisten_port = 6432\n",
        "image.repository nginx:1.25\nimage.pullPolicy IfNotPresent\n",
        "- [x] image:nginx pinned\n- [ ] chart:redis to bump\n",
    ],
)
def test_config_without_credentials_is_kept_whole(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "[db\nhost = x\npassword = hunter2",  # a section never closed
        'auth = { token = "unterminated\n  - an item',
        'variable "x" {\n  default = "lowercasepw"\n',  # a block never closed
        "machine h login u password",  # a keyword without its value
        '"app" "pw" extra\n"ops" "x"',
    ],
)
def test_malformed_config_is_judged_as_before(text: str) -> None:
    """No grammar reads it whole: it passes through untouched to the gate's usual rules."""
    assert redact_config(text, judge=_judge_setting) == text


def test_malformed_config_still_loses_what_the_usual_rules_catch() -> None:
    judged = redact_text("[db\nhost = x\npassword = hunter2")
    assert "hunter2" not in judged


@pytest.mark.parametrize(
    "text",
    [
        "The service reads its settings at start.\nIt retries three times, then pages on-call.\n",
        "Rotate the password monthly.\nThe token comes from Vault.\n",
        "[WARNING] the disk is almost full\nsee the runbook for what to do next\n",
        "Hello world",
    ],
)
def test_prose_is_not_config(text: str) -> None:
    assert redact_config(text, judge=_judge_setting) == text
    assert redact_text(text) == text


def test_what_the_gate_wrote_is_read_as_written() -> None:
    """``password = <redacted>`` is the gate's own output: judging it again changes nothing (the prose
    rule read ``=`` as the password and wrote ``password <redacted> <redacted>``)."""
    for text in ("password = <redacted>\nhost = h", 'password = "<redacted>"', "x\npassword: <redacted>"):
        assert redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "[s]\n" + "key = value\n" * 4000,
        "a = 1\n" * 6000,
        'variable "x" {\n' * 2000,
        "[" * 20_000,
        "x = " + "[" * 10_000 + "]" * 10_000,
        "machine h login u password p\n" * 1500,
        '"u" "p"\n' * 5000,
        "org.apache.PlainLoginModule required " + 'user_a="b" ' * 3000 + ";",
        "a.b " * 10_000,
    ],
    ids=["ini", "toml", "hcl-open", "brackets", "nested-array", "netrc", "userlist", "jaas", "props"],
)
def test_huge_config_text_is_judged_in_bounded_time(text: str) -> None:
    started = time.perf_counter()
    judged = redact_text(text)
    assert time.perf_counter() - started < 2.0
    assert isinstance(judged, str)


def test_text_past_the_bound_is_left_to_the_usual_rules() -> None:
    text = "[db]\npassword = hunter2\n" + "# filler\n" * (MAX_CONFIG_CHARS // 9 + 1)
    assert redact_config(text, judge=_judge_setting) == text
