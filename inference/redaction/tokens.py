"""Provider token formats (GitHub, GitLab, Slack, AWS, Stripe, ... 200 of them) from gitleaks' public rule set.

The formats come as data, ``rules/gitleaks.toml`` copied unchanged from gitleaks (MIT) at a pinned
commit, rather than as patterns written here: a maintained list follows the providers' new formats,
and updating it is a file swap (``rules/README.md``). Each rule is used as gitleaks uses it: its
``keywords`` gate it (a rule runs only when one of them is in the lower-cased value: every string of
every object passes here, and most hold none), its ``regex`` finds the candidates, ``secretGroup``
(or the first group that matched) is the secret, ``entropy`` is the secret's minimum Shannon entropy,
and its ``allowlists`` (and the file's global one) keep what matches them. Only the secret is
replaced, so ``twitter_key=<redacted>`` still says what was there.

Left out: rules that need a file path (``path``), since a value has none; the generic rules, whose
job the gate's own name rules do (:data:`LEFT_OUT`); and rules whose Go (RE2) regex Python's ``re``
cannot take even translated (:func:`translate_regex`), counted in :attr:`TokenRules.skipped`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import math
import re
import tomllib
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

from kubevec.inference.redaction.vocabulary import REDACTED

#: Where the copied rule file came from; ``rules/README.md`` says how to update it.
GITLEAKS_SOURCE: Final = "https://github.com/gitleaks/gitleaks/blob/{commit}/config/gitleaks.toml"
GITLEAKS_COMMIT: Final = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"
#: The file's sha256: a test fails on an accidental edit, and a new file changes this module, so the
#: builders' fingerprint (which reads the code, not data files) changes and every document is rebuilt.
GITLEAKS_SHA256: Final = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"
RULES_FILE: Final = "rules/gitleaks.toml"

#: Rules left out on purpose, and why.
LEFT_OUT: Final[Mapping[str, str]] = {
    # ``<anything key/token/secret/password...> = <10+ characters of entropy 3.5>``: a judgement by the
    # name in front of a value, which the gate makes with its own vocabulary (names.py: reference words
    # such as secretName or tokenUrl, yes/no, placeholders, other languages) on the parsed field name,
    # not a regex over the text that reads any run holding key, auth, access or token as a name
    # (``authority``, ``accessModes``, ``tokenTTL``) and judges its value by entropy alone.
    "generic-api-key": "the gate judges NAME=value by its own name rules",
    # ``\bcurl\b(?:.*|.*(?:[\r\n]{1,2}.*){1,5})[ \t\n\r](?:-u|--user)...``: the ``.*`` before the flag
    # is quadratic in Python's backtracking re (0.5 s on 8 KB of ``curl -u a``, RE2 is linear), and the
    # gate's command-line rules (patterns.py: ``-u user:pw``, ``Authorization:``, ``Bearer``) catch both.
    "curl-auth-header": "the gate's command-line rules catch it; quadratic in Python's re",
    "curl-auth-user": "the gate's command-line rules catch it; quadratic in Python's re",
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Allowlist:
    """What keeps a finding: a regex over its secret (or whole match, or line), or a stopword in the secret."""

    target: str  # "secret", "match" or "line"
    regexes: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]
    every: bool  # condition = "AND": regexes and stopwords must both say so

    def keeps(self, *, secret: str, match: str, line: str) -> bool:
        text = {"match": match, "line": line}.get(self.target, secret)
        by_regex = bool(text) and any(pattern.search(text) for pattern in self.regexes)
        lowered = secret.lower()
        by_stopword = any(word in lowered for word in self.stopwords)
        if self.every:
            checks = [by_regex] * bool(self.regexes) + [by_stopword] * bool(self.stopwords)
            return bool(checks) and all(checks)
        return by_regex or by_stopword


@dataclasses.dataclass(frozen=True, kw_only=True)
class TokenRule:
    id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    secret_group: int  # 0: the first group that matched, else the whole match
    entropy: float | None
    allowlists: tuple[Allowlist, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class TokenRules:
    rules: tuple[TokenRule, ...]
    allowlists: tuple[Allowlist, ...]  # the file's global allowlist, for every rule
    skipped: Mapping[str, str]  # rule id -> why it is not used
    #: every keyword, and the rules (by index) each one gates: the keywords a value holds are found once
    by_keyword: Mapping[str, tuple[int, ...]]


def translate_regex(regex: str) -> str:
    """A Go (RE2) regex as Python's ``re`` takes it, or unchanged where they agree.

    RE2 lets a flag group stand anywhere (``\\b(p8e-(?i)[a-z0-9]{32})``) and applies it to the rest of
    the enclosing group; Python takes flags only at the start, so it becomes a scoped group closed where
    the enclosing group closes. ``\\z`` (end of text) is Python's ``\\Z``; POSIX classes
    (``[[:alnum:]]``) are spelt out; a ``[`` or doubled ``-`` inside a class is escaped (Python warns
    that it may mean nested sets some day).
    """
    out: list[str] = []
    closes = [0]  # scoped flag groups to close when the group they stand in closes (0: the whole regex)
    at = 0
    in_class = False
    while at < len(regex):
        char = regex[at]
        if char == "\\":
            pair = regex[at : at + 2]
            out.append(r"\Z" if pair == r"\z" else pair)
            at += 2
            continue
        if in_class:
            posix = _POSIX_CLASS.match(regex, at)
            if posix is not None:
                out.append(_POSIX_CLASSES[posix.group(1)])
                at = posix.end()
                continue
            if char == "]" and not _class_opening(out):
                in_class = False
                out.append(char)
            elif char in "[&~|" or (char == "-" and regex[at + 1 : at + 2] == "-"):
                out.append("\\" + char)
            else:
                out.append(char)
            at += 1
            continue
        flags = _FLAG_GROUP.match(regex, at)
        if flags is not None:
            if at == 0:
                out.append(flags.group(0))  # at the start: Python's global flags, as in Go
            else:
                out.append(f"(?{flags.group(1)}:")
                closes[-1] += 1
            at = flags.end()
            continue
        if char == "[":
            in_class = True
            out.append(char)
            if regex[at + 1 : at + 2] == "^":
                out.append("^")
                at += 1
        elif char == "(":
            closes.append(0)
            out.append(char)
        elif char == ")":
            out.append(")" * closes.pop() if len(closes) > 1 else "")
            out.append(char)
        else:
            out.append(char)
        at += 1
    out.append(")" * closes[0])
    return "".join(out)


_FLAG_GROUP: Final = re.compile(r"\(\?([imsU-]+)\)")
_POSIX_CLASS: Final = re.compile(r"\[:(\w+):\]")
_POSIX_CLASSES: Final = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
    "space": r"\s",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
}


def _class_opening(out: list[str]) -> bool:
    """A ``]`` right after ``[`` or ``[^`` is a literal in both dialects, not the class's end."""
    return out[-1:] == ["["] or out[-2:] == ["[", "^"]


def shannon_entropy(text: str) -> float:
    """Bits per character, as gitleaks computes it for a rule's ``entropy`` threshold."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(count / size * math.log2(count / size) for count in Counter(text).values())


def load_rules(text: str) -> TokenRules:
    """The rules of a gitleaks TOML file, compiled; a rule that cannot be used is skipped and named."""
    data = tomllib.loads(text)
    rules: list[TokenRule] = []
    skipped: dict[str, str] = {}
    for entry in data.get("rules", []):
        rule_id = str(entry.get("id", "?"))
        if rule_id in LEFT_OUT:
            skipped[rule_id] = LEFT_OUT[rule_id]
        elif "path" in entry or "regex" not in entry:
            skipped[rule_id] = "needs a file path"
        elif not entry.get("keywords"):
            skipped[rule_id] = "no keywords (would run on every value)"
        else:
            try:
                rules.append(_rule(rule_id, entry))
            except (re.error, ValueError) as exc:
                skipped[rule_id] = f"does not compile: {exc}"
    by_keyword: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        for keyword in rule.keywords:
            by_keyword.setdefault(keyword, []).append(index)
    return TokenRules(
        rules=tuple(rules),
        allowlists=tuple(_allowlist(entry) for entry in _global_allowlists(data)),
        skipped=skipped,
        by_keyword={keyword: tuple(indexes) for keyword, indexes in by_keyword.items()},
    )


def _rule(rule_id: str, entry: Mapping[str, Any]) -> TokenRule:
    entropy = entry.get("entropy")
    return TokenRule(
        id=rule_id,
        pattern=_compile(str(entry["regex"])),
        keywords=tuple(str(keyword).lower() for keyword in entry["keywords"]),
        secret_group=int(entry.get("secretGroup", 0)),
        entropy=float(entropy) if entropy else None,
        allowlists=tuple(_allowlist(allow) for allow in entry.get("allowlists", [])),
    )


def _global_allowlists(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``[allowlist]`` (the file's form today) and ``[[allowlists]]`` (its announced one)."""
    single = data.get("allowlist")
    return [*([single] if isinstance(single, Mapping) else []), *data.get("allowlists", [])]


def _allowlist(entry: Mapping[str, Any]) -> Allowlist:
    every = str(entry.get("condition", "OR")).upper() == "AND"
    regexes = tuple(_compile(str(regex)) for regex in entry.get("regexes", []))
    if every and entry.get("paths"):
        regexes = ()  # AND with a path that a value never has: this allowlist keeps nothing
        return Allowlist(target="secret", regexes=regexes, stopwords=(), every=True)
    return Allowlist(
        target=str(entry.get("regexTarget", "secret")),
        regexes=regexes,
        stopwords=tuple(str(word).lower() for word in entry.get("stopwords", [])),
        every=every,
    )


def _compile(regex: str) -> re.Pattern[str]:
    """RE2's ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII: so are these."""
    return re.compile(translate_regex(without_name_prefix(regex)), re.ASCII)


#: What gitleaks puts before a provider's name (``[\\w.-]{0,50}?(?:twitter)...``) so a finding shows the
#: whole variable name.
_NAME_PREFIX: Final = r"[\w.-]{0,50}?"


def without_name_prefix(regex: str) -> str:
    """``regex`` without the lazy run of name characters it opens with (one, or two around a ``(?i``).

    The run only widens the match leftwards, never changes which secret is found (it may be empty),
    but Python's backtracking ``re`` tries its 51 lengths at every position, and for two nested runs
    2,601: 16 s on 8 KB of ``sumo=`` (RE2 is linear). Without it a match starts at the provider's name.
    """
    lead = ""
    while True:
        if regex.startswith(_NAME_PREFIX):
            regex = regex[len(_NAME_PREFIX) :]
        elif not lead and regex.startswith(("(?i)", "(?i:")):
            lead, regex = regex[:4], regex[4:]
        else:
            return lead + regex


@functools.cache
def gitleaks_rules() -> TokenRules:
    """The shipped rule file, read and compiled at first use (once per process)."""
    text = importlib.resources.files("kubevec.inference.redaction").joinpath(RULES_FILE).read_text("utf-8")
    return load_rules(text)


def redact_tokens(value: str, *, lowered: str | None = None, rules: TokenRules | None = None) -> str:
    """``value`` with the secret of every rule's finding replaced by ``<redacted>``.

    Rules are tried on the value as it came (not on one another's output, as gitleaks scans a file),
    only those whose keywords it holds; overlapping findings are replaced as one.
    """
    rules = rules if rules is not None else gitleaks_rules()
    lowered = lowered if lowered is not None else value.lower()
    present = [keyword for keyword in rules.by_keyword if keyword in lowered]
    if not present:
        return value
    gated = sorted({index for keyword in present for index in rules.by_keyword[keyword]})
    spans: list[tuple[int, int]] = []
    for index in gated:
        rule = rules.rules[index]
        for match in rule.pattern.finditer(value):
            span = _secret_span(match, rule.secret_group)
            secret = value[span[0] : span[1]]
            if not secret.strip() or secret.startswith(REDACTED):
                continue
            if rule.entropy is not None and shannon_entropy(secret) <= rule.entropy:
                continue
            if _kept(rule, rules, secret=secret, match=match.group(0), line=_line(value, match)):
                continue
            spans.append(span)
    return _replace(value, spans) if spans else value


def _secret_span(match: re.Match[str], group: int) -> tuple[int, int]:
    """``secretGroup``'s span, else the first group that matched something, else the whole match
    (less the newlines gitleaks trims from a match)."""
    if group and group <= (match.re.groups or 0):
        return match.span(group)
    for index in range(1, (match.re.groups or 0) + 1):
        start, end = match.span(index)
        if end > start:
            return start, end
    start, end = match.span()
    text = match.group(0)
    return start + len(text) - len(text.lstrip("\n")), end - len(text) + len(text.rstrip("\n"))


def _line(value: str, match: re.Match[str]) -> str:
    start = value.rfind("\n", 0, match.start()) + 1
    end = value.find("\n", match.end())
    return value[start : end if end >= 0 else len(value)]


def _kept(rule: TokenRule, rules: TokenRules, *, secret: str, match: str, line: str) -> bool:
    return any(allow.keeps(secret=secret, match=match, line=line) for allow in (*rules.allowlists, *rule.allowlists))


def _replace(value: str, spans: list[tuple[int, int]]) -> str:
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:
            at = max(at, end)  # overlaps the span just replaced: one <redacted> for both
            continue
        out.append(value[at:start])
        out.append(REDACTED)
        at = end
    out.append(value[at:])
    return "".join(out)
