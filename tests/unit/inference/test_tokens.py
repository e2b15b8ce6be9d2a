"""Provider token formats from gitleaks' rule set: the pinned file, how its rules are read, and what they catch.

Every token here is synthetic: the shape of the provider's format, built from a fixed alphabet.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import re

import pytest

from kubevec.inference.redaction import redact_text
from kubevec.inference.redaction.tokens import (
    GITLEAKS_SHA256,
    LEFT_OUT,
    RULES_FILE,
    gitleaks_rules,
    load_rules,
    redact_tokens,
    shannon_entropy,
    translate_regex,
    without_name_prefix,
)

RANDOM = "Kv9cAnaRyQ7xZ2mW4pL8tB3nH6jD1fG5sE0rU"  # mixed case and digits, high entropy


def _run(length: int, alphabet: str = RANDOM) -> str:
    return (alphabet * (length // len(alphabet) + 1))[:length]


def test_the_rule_file_is_the_pinned_one() -> None:
    """An accidental edit of the copied file fails here; an update changes GITLEAKS_SHA256 with it."""
    data = importlib.resources.files("kubevec.inference.redaction").joinpath(RULES_FILE).read_bytes()
    assert hashlib.sha256(data).hexdigest() == GITLEAKS_SHA256


def test_rules_compiled_and_skipped() -> None:
    """222 rules at the pinned commit: 216 - 3 left out on purpose - 5 that need a file path = 214 used,
    none failing to compile once translated."""
    rules = gitleaks_rules()
    assert len(rules.rules) == 214
    assert len(rules.skipped) == 8
    assert set(LEFT_OUT) <= set(rules.skipped)
    assert not [reason for reason in rules.skipped.values() if reason.startswith("does not compile")]
    assert {"github-pat", "aws-access-token", "slack-bot-token", "stripe-access-token"} <= {r.id for r in rules.rules}


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ("GITHUB_TOKEN=ghp_" + _run(36), "ghp_" + _run(36)),
        ("github_pat_" + _run(82, RANDOM + "_"), "github_pat_" + _run(82, RANDOM + "_")),
        ("glpat-" + _run(20), "glpat-" + _run(20)),
        ("aws_access_key_id AKIAZ7VRSQ5TJN2XMY4K", "AKIAZ7VRSQ5TJN2XMY4K"),
        ("bot xoxb-123456789012-1234567890123-" + _run(24), "xoxb-123456789012-1234567890123-" + _run(24)),
        ("STRIPE=sk_live_" + _run(24), "sk_live_" + _run(24)),
        ("npm_" + _run(36) + " in .npmrc", "npm_" + _run(36)),
        ("dop_v1_" + _run(64, "0123456789abcdef"), "dop_v1_" + _run(64, "0123456789abcdef")),
        ("shpat_" + _run(32, "0123456789abcdef"), "shpat_" + _run(32, "0123456789abcdef")),
        ("key: glsa_" + _run(32) + "_" + _run(8, "0123456789abcdef"), "glsa_" + _run(32)),
        ("LINEAR=lin_api_" + _run(40), "lin_api_" + _run(40)),  # a rule whose (?i) stands mid-regex
        ("twitter_api_key = " + _run(25, "k9c2nq7x4m8w3p5l"), _run(25, "k9c2nq7x4m8w3p5l")),
    ],
)
def test_provider_formats_are_caught(value: str, secret: str) -> None:
    judged = redact_tokens(value)
    assert secret not in judged
    assert "<redacted>" in judged
    assert secret not in redact_text(value)


def test_only_the_secret_goes() -> None:
    """secretGroup (or the first group that matched) is replaced, not the name before it."""
    value = "twitter_api_key = " + _run(25, "k9c2nq7x4m8w3p5l") + " # rotated"
    assert redact_tokens(value) == "twitter_api_key = <redacted> # rotated"


def test_a_rule_runs_only_when_its_keyword_is_in_the_value() -> None:
    rules = load_rules(
        """
[[rules]]
id = "acme"
regex = '''\\bacme_[a-z0-9]{8}'''
keywords = ["acme_"]
"""
    )
    assert redact_tokens("acme_k9c2nq7x", rules=rules) == "<redacted>"
    assert redact_tokens("ACME_k9c2nq7x", rules=rules) == "ACME_k9c2nq7x"  # the keyword is there, the regex says no
    gated = load_rules(
        """
[[rules]]
id = "anything"
regex = '''[a-z]+'''
keywords = ["zzz"]
"""
    )
    assert redact_tokens("plain words here", rules=gated) == "plain words here"
    assert redact_tokens("plain words zzz", rules=gated) == "<redacted> <redacted> <redacted>"


def test_a_secret_at_or_below_the_rules_entropy_is_kept() -> None:
    rules = load_rules(
        """
[[rules]]
id = "acme"
regex = '''acme_([a-z0-9]{12})'''
keywords = ["acme_"]
entropy = 3
"""
    )
    assert shannon_entropy("aaaaaaaaaaaa") == 0
    assert redact_tokens("acme_aaaaaaaaaaaa", rules=rules) == "acme_aaaaaaaaaaaa"
    assert shannon_entropy("k9c2nq7x4m8w") > 3
    assert redact_tokens("acme_k9c2nq7x4m8w", rules=rules) == "acme_<redacted>"


def test_allowlists_keep_what_they_name() -> None:
    """The rule's own (AWS: ids ending EXAMPLE) and the file's global one (a ${VAR} template)."""
    assert "AKIAIOSFODNN7EXAMPLE" in redact_tokens("AKIAIOSFODNN7EXAMPLE", rules=gitleaks_rules())
    rules = load_rules(
        """
[allowlist]
regexes = ['''^\\$\\{(?:[A-Z_]+|[a-z_]+)}$''']
stopwords = ["changeme"]

[[rules]]
id = "acme"
regex = '''acme=(\\S+)'''
keywords = ["acme="]
"""
    )
    assert redact_tokens("acme=${ACME_KEY}", rules=rules) == "acme=${ACME_KEY}"
    assert redact_tokens("acme=xchangemex", rules=rules) == "acme=xchangemex"
    assert redact_tokens("acme=k9c2nq7x", rules=rules) == "acme=<redacted>"


def test_a_rule_that_does_not_compile_is_skipped_and_counted() -> None:
    rules = load_rules(
        """
[[rules]]
id = "broken"
regex = '''(unclosed'''
keywords = ["x"]

[[rules]]
id = "path-only"
path = '''\\.p12$'''

[[rules]]
id = "fine"
regex = '''fine_[0-9]{4}'''
keywords = ["fine_"]
"""
    )
    assert [rule.id for rule in rules.rules] == ["fine"]
    assert rules.skipped["broken"].startswith("does not compile")
    assert rules.skipped["path-only"] == "needs a file path"


@pytest.mark.parametrize(
    ("go", "python"),
    [
        (r"\b(p8e-(?i)[a-z0-9]{4})(?:x|$)", r"\b(p8e-(?i:[a-z0-9]{4}))(?:x|$)"),  # flags mid-group: scoped
        (r"a(?i)b|c", r"a(?i:b|c)"),  # to the end of the regex
        (r"(?i)abc", r"(?i)abc"),  # at the start: as it was
        (r"x\z", r"x\Z"),
        (r"pat[[:alnum:]]{14}", r"pat[a-zA-Z0-9]{14}"),
        (r"[]a]", r"[]a]"),  # a ] right after [ is a literal
    ],
)
def test_go_regexes_are_translated(go: str, python: str) -> None:
    assert translate_regex(go) == python
    re.compile(python)


def test_the_name_prefix_is_dropped_without_changing_the_secret() -> None:
    """gitleaks' lazy ``[\\w.-]{0,50}?`` before a provider's name is backtracked 51 (or 2,601) ways per
    position by Python's re; without it the same secret is found."""
    regex = r"[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:sumo)[ \t]{0,3})(?:=)([a-z0-9]{8})"
    assert without_name_prefix(regex) == r"(?i:(?:sumo)[ \t]{0,3})(?:=)([a-z0-9]{8})"
    assert without_name_prefix(r"(?i)[\w.-]{0,50}?(?:x)") == r"(?i)(?:x)"


def test_hostile_text_stays_cheap() -> None:
    """8 KB of a provider's name and '=' (what made the translated rules backtrack for seconds)."""
    import time

    rules = gitleaks_rules()
    for text in ("sumo= " * 1400, "okta=" * 1600, "curl -u a " * 800, "airtable a" * 800):
        started = time.perf_counter()
        redact_tokens(text, rules=rules)
        assert time.perf_counter() - started < 2.0
