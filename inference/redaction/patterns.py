"""Judging by value: the credential-shaped parts of one string, replaced and the rest kept.

Provider token formats come from gitleaks' rule set (:mod:`.tokens`); here: userinfo in URLs, scheme
credentials, armoured blocks, the token formats that set lacks, command lines (flags, tools
that take a password after a short flag), connection strings, SQL and config text, prose ("the
password is x"), webhook URLs, ``NAME=value`` and ``NAME: value`` pairs and YAML block scalars
under credential names, and percent-encoded tokens judged decoded too. Each rule names the needles
a value must hold for it to match (:data:`_VALUE_NEEDLES`), so most strings try none of them.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from typing import Final, TypeAlias

from kubevec.inference.redaction.generated import looks_chosen_password, looks_random
from kubevec.inference.redaction.names import (
    holds_credential,
    is_credential_name,
    says_what_it_is,
    says_yes_or_no,
)
from kubevec.inference.redaction.tokens import redact_tokens
from kubevec.inference.redaction.vocabulary import REDACTED

#: ``NAME=value`` anywhere (env files, flags, query and connection strings); the name is judged by
#: :func:`holds_credential`. ``"NAME": value`` and ``NAME: value`` are :data:`COLON_PAIR` (raw strings only):
#: a quoted name (JSON) may have no space after its colon, a bare one (YAML, headers) must, so an
#: image reference (``acme/token-service:1.4.2``) is not a pair; neither side crosses a line.
_PAIR_VALUE: Final = r"(\{\{[^{}\n]{1,256}\}\}|\$\{[^{}\s]{1,128}\}|\"[^\"]*\"|'[^']*'|[^\s&;,\"'|}]+)"
_EQUALS_NAME: Final = re.compile(r"(?<![\w.])([A-Za-z_][\w.-]{0,127})[ \t]*=[ \t]*")
_PAIR_VALUE_AT: Final = re.compile(_PAIR_VALUE)
_SHORT_VALUE_AT: Final = re.compile(r"\"[^\"]{0,64}\"|'[^']{0,64}'|[^\s&;,\"'|}]{1,65}")
COLON_PAIR: Final = re.compile(
    rf"(?<![\w./@:-])(?:([\"'])([A-Za-z_][\w.-]{{0,127}})\1([ \t]*:[ \t]*)|()([A-Za-z_][\w.-]{{0,127}})([ \t]*:[ \t]+)){_PAIR_VALUE}"
)
#: A YAML block scalar under a credential key: ``password: |`` and the more-indented lines after it.
_BLOCK_SCALAR: Final = re.compile(r"(?m)^([ \t]*)([\"']?)([A-Za-z_][\w.-]{0,127})\2[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*$")


def redact_equals_pairs(value: str) -> str:
    """Every ``NAME=value`` whose NAME holds a credential, also when the pair sits in another pair's
    value (``--from-literal=password=x``, ``JAVA_OPTS=-Ddb.password=x``): every ``NAME=`` is judged,
    not only those after the end of the last pair, and a credential's value is read from its ``=`` on
    (so the work is linear: no value is scanned twice)."""
    out: list[str] = []
    at = 0
    for match in _EQUALS_NAME.finditer(value):
        if match.start() < at:
            continue
        name = match.group(1)
        credential = holds_credential(name)
        # a credential's value is read whole; any other pair's only as far as a chosen password can reach
        # (a whole read from every NAME= of a=a=a=... was quadratic)
        pair_value = (_PAIR_VALUE_AT if credential else _SHORT_VALUE_AT).match(value, match.end())
        if pair_value is None or _holds_nothing(pair_value.group(0)):
            continue
        if not credential and not _chosen_under(pair_value.group(0).strip("\"'"), name):
            continue
        out.append(value[at : match.end()])
        out.append(REDACTED)
        at = pair_value.end()
    out.append(value[at:])
    return "".join(out)


def _holds_nothing(value: str) -> bool:
    """A pair's value that is no secret: yes/no or a placeholder, what the gate already wrote
    (``password = "<redacted>"``), or the opening of a table whose own pairs are judged one by one
    (``auth = { token = "x" }``: the ``{`` is not the credential, ``token``'s value is)."""
    return says_yes_or_no(value) or value.startswith(REDACTED) or value.strip("\"'") == REDACTED or value in ("{", "[")


def colon_pair(match: re.Match[str]) -> str:
    quoted, quoted_name, quoted_separator, _, bare_name, bare_separator, value = match.groups()
    quote, name, separator = (quoted, quoted_name, quoted_separator) if quoted else ("", bare_name, bare_separator)
    if not holds_credential(name) or _holds_nothing(value) or value in ("|", ">"):
        return match.group(0)
    return f"{quote}{name}{quote}{separator}{REDACTED}"


def _userinfo(match: re.Match[str]) -> str:
    """The userinfo of a URL, up to the last ``@`` of its authority: a password may hold ``@``, ``/`` or
    ``#`` unencoded (``amqp://guest:p@ss@rabbit``). A path that holds an ``@`` is not userinfo
    (``https://registry.npmjs.org/@acme/ui``, ``https://host:8080/x@y``)."""
    scheme, userinfo = match.groups()
    if userinfo.startswith(REDACTED):
        return match.group(0)
    user, colon, password = userinfo.partition(":")
    if colon and says_yes_or_no(password):
        return match.group(0)  # postgres://${DB_USER}:${DB_PASSWORD}@host: a template, not a credential
    if "/" in user or _HOST_PORT_PATH.match(userinfo):
        return match.group(0)  # a host and a path, not userinfo
    if not colon and "/" in userinfo:
        return match.group(0)
    if not colon and re.fullmatch(r"[a-z][a-z0-9._-]{0,31}", userinfo) and not looks_random(userinfo):
        return match.group(0)  # ssh://git@github.com: a user name, no password
    return f"{scheme}{REDACTED}@"


#: ``host:port/path``: what precedes an ``@`` in a URL's path rather than in its userinfo.
_HOST_PORT_PATH: Final = re.compile(r"[\w.-]+:\d{1,5}(?:/|$)")


#: Programs whose password travels as the value of a short flag: (programs, flags). The flag's value
#: goes when the program stands earlier in the same command (not after ``|``, ``;`` or ``&``).
TOOL_PASSWORD_FLAGS: Final = (
    (("sshpass",), ("-p",)),
    (
        (
            "docker login",
            "podman login",
            "nerdctl login",
            "helm registry login",
            "oras login",
            "skopeo login",
            "buildah login",
            "crane auth login",
            "regctl registry login",
            "cosign login",
        ),
        ("-p",),
    ),
    (("redis-cli", "keydb-cli", "valkey-cli"), ("-a", "--pass")),
    (("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare"), ("-w",)),
    (("sqlcmd", "bcp", "osql"), ("-P",)),
    (("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"), ("-p",)),
    (("smbclient", "rpcclient"), ("--password",)),
    (("ssh-keygen",), ("-N", "-P")),  # the new and the old passphrase
    (("erl", "iex", "elixir", "rabbitmq-server"), ("-setcookie", "--cookie")),
    (("rabbitmqctl",), ()),
)


def _spaced(program: str) -> str:
    """``docker login`` as a pattern: its words escaped, any run of spaces between them."""
    return r"\s+".join(re.escape(word) for word in program.split())


_TOOL_FLAG_RULES: Final = tuple(
    re.compile(
        rf"(\b(?:{'|'.join(_spaced(p) for p in programs)})\b[^|;&\n]{{0,256}}?\s(?:{'|'.join(re.escape(f) for f in flags)})"
        r"(?:\s+|=))(['\"]?)([^\s'\"|;&]+)\2"
    )
    for programs, flags in TOOL_PASSWORD_FLAGS
    if flags
)


#: Erlang's distribution cookie on its own line (``vm.args``) or any command: the flag says what follows.
_SETCOOKIE: Final = re.compile(r"((?<![\w-])-setcookie(?:\s+|=))(['\"]?)([^\s'\"|;&]+)\2")


def _tool_flag(match: re.Match[str]) -> str:
    lead, quote, value = match.groups()
    if value.startswith(REDACTED) or value.startswith("-") or says_yes_or_no(value):
        return match.group(0)
    return f"{lead}{quote}{REDACTED}{quote}"


#: A credential word in prose or config text, a connecting word or sign, then the value (``The password
#: is x``, ``Das Passwort lautet x``, ``requirepass x``, ``password x`` in a .netrc).
_CUE: Final = (
    r"password|passwort|kennwort|passwd|passphrase|pwd|mot de passe|contrase[ñn]a|senha|wachtwoord|"
    r"has[łl]o|l[öo]senord|salasana|adgangskode|passord|пароль|密码|パスワード|비밀번호|requirepass|masterauth"
)
#: What else a secret is called in prose: PINs and codes, keys and tokens, in a few languages. Raw strings
#: only (:data:`RAW_VALUE_RULES`): rendered text writes ``token: ACME challenge token ...`` as its own layout.
_MORE_CUE: Final = (
    r"pin|pin[ -]code|passcode|otp|(?:api|access|secret|private|license)[ _-]?key|"
    r"(?:access|auth|api|bearer|bot|refresh)[ _-]?token|token|(?:recovery|backup|unlock)[ _-]codes?|"
    r"cl[ée](?: d'api| api| secr[èe]te)?|clave(?: de api| secreta)?|chiave(?: api)?|schl[üu]ssel|break[ -]glass"
)
_CONNECTOR_VALUE: Final = (
    r"(?![\w-])([ \t]*(?:(?:is|was|lautet|ist|est|es|é|è|e|era|wird|sera|:|=|->)[ \t]+|[ \t]+))"
    r"(['\"«„]?)(?![=:](?:\s|$))([^\s'\"»“<>(\[{&|;$-][^\s'\"»“<>]{0,255})"
)
_PROSE_SECRET: Final = re.compile(rf"(?i)(?<![\w-])({_CUE}){_CONNECTOR_VALUE}")
_PROSE_SECRET_MORE: Final = re.compile(rf"(?i)(?<![\w-])({_MORE_CUE}){_CONNECTOR_VALUE}")


def _prose_secret(match: re.Match[str]) -> str:
    """The value after a credential word: always after a config directive or a connecting word; after a
    bare space only when it does not read as a plain word (``password rotation is handled`` stays)."""
    cue, connector, quote, value = match.groups()
    bare = connector.strip() == ""
    word = re.fullmatch(r"[^\W\d_]+[.,;:!?)]?", value) is not None
    directive = cue.lower() in ("requirepass", "masterauth")
    if value.startswith(REDACTED) or says_yes_or_no(value.rstrip(".,;:!?")):
        return match.group(0)
    if not directive and word and (bare or value.lower().rstrip(".,;:!?") in _PROSE_WORDS or value[:1].islower()):
        return match.group(0)
    if bare and cue.isupper() and _VARIABLE_NAME.fullmatch(value.rstrip(".,;:!?)")):
        return match.group(0)  # a list of variable names (PASSWORD DB_PASSWORD): names, not values
    trail = value[-1] if value[-1] in ".,;:!?)" and len(value) > 1 else ""
    return f"{cue}{connector}{quote}{REDACTED}{trail}"


#: An environment variable's name as written (``DB_PASSWORD``, ``REDIS_AUTH``): upper case words joined by ``_``.
_VARIABLE_NAME: Final = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _plain_word(value: str) -> bool:
    """A word as prose has them (``dashboard``, ``Groups``): letters only, no case change inside."""
    return re.fullmatch(r"[^\W\d_][^\W\d_A-Z]*[.,;:!?]?", value) is not None


#: Words that follow "the password is" in documentation rather than a password.
_PROSE_WORDS: Final = frozenset(
    {"the", "a", "an", "not", "never", "stored", "required", "optional", "set", "used", "generated", "read",
     "taken", "kept", "empty", "missing", "invalid", "wrong", "correct", "changed", "rotated", "mounted"}
)  # fmt: skip
#: ``login USER / PASSWORD`` and ``user: USER / PASSWORD`` in prose.
_LOGIN_PAIR: Final = re.compile(
    r"(?i)(?<![\w-])((?:default\s+)?(?:login|logon|credentials?|user(?:name)?|account)\s*:?\s+[^\s/]{1,64}\s*/\s*)([^\s'\"()]{2,128})"
)
#: Scheme-less DSNs: Go's ``user:pass@tcp(host)/db`` and ``user:pass@host``; Oracle's ``user/pass@//host``.
_DSN_USERINFO: Final = re.compile(
    r"(?<![\w/:.@%+-])((?!(?:mailto|urn|tel|sip|sips|data|news):)[A-Za-z_][\w.$-]{0,63}:)"
    r"([^\s@/:'\"]{1,256})@(?!sha\d{1,3}:|sha\d{1,3}-|[\d.]+$)(?=[\w\[(])"
)
_ORACLE_USERINFO: Final = re.compile(
    r"(?<![\w/:.@-])([A-Za-z_][\w$#]{0,29}/)([^\s@/'\"]{1,128})@(?=//|[A-Za-z])(?!sha\d)"
)
#: SQL and config text: ``IDENTIFIED BY 'x'``, ``PASSWORD 'x'``, ``<password>x</password>``, a .pgpass line.
_SQL_PASSWORD: Final = re.compile(
    r"(?i)\b((?:identified\s+by|(?:with\s+)?(?:encrypted\s+)?password)\s+)(['\"])([^'\"]{1,256})\2"
)
_XML_CREDENTIAL: Final = re.compile(r"<([A-Za-z][\w.:-]{0,63})>([^<]{1,512})</\1>")
#: A .pgpass line (``host:port:database:user:password``) wherever it stands: a line of its own, or quoted in a
#: sentence (the file's line as a description shows it). Host and user hold a letter (or ``*``), so an IPv6
#: address or a time with fractions (``10:30:00:125``) is no such line.
_PGPASS_LINE: Final = re.compile(
    r"(?<![^\s\"'(\[])([^\s:\"'(\[]{1,253}:(?:\d{1,5}|\*):[^\s:]{1,128}:([^\s:]{1,128}):)([^\s\"')\]]{1,256})"
)
_LETTER: Final = re.compile(r"[A-Za-z*]")


def _pgpass_line(match: re.Match[str]) -> str:
    lead, user, _ = match.groups()
    if _LETTER.search(lead.partition(":")[0]) is None or _LETTER.search(user) is None:
        return match.group(0)
    return f"{lead}{REDACTED}"


#: ``openssl ... -passin pass:x`` and ``user:pass`` fed to ``chpasswd``; ``htpasswd -b FILE USER PASS``.
_OPENSSL_PASS: Final = re.compile(r"(?<![\w-])(pass:)([^\s'\"]{1,256})")
_CHPASSWD: Final = re.compile(r"(['\"]?)([\w.-]{1,64}:)([^\s'\":]{1,256})\1(\s*\|\s*(?:sudo\s+)?chpasswd\b)")
_HTPASSWD: Final = re.compile(
    r"(\bhtpasswd\s+(?:-[A-Za-z]*\s+)*?-[A-Za-z]*b[A-Za-z]*\s+(?:-[A-Za-z]+\s+)*\S+\s+\S+\s+)([^\s|;&]+)"
)
#: A URL about a webhook: path segments that look like a key (a digit or mixed case, 6 or more
#: characters) are its secret, whatever the service.
_HOOK_URL: Final = re.compile(r"(?i)\bhttps?://\S{1,2048}")
_SEGMENT: Final = re.compile(r"(?<=/)[^\s/?#]{6,}")
_PERCENT: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_SPACES: Final = re.compile(r"(\s+)")


def _xml_credential(match: re.Match[str]) -> str:
    tag, value = match.groups()
    return f"<{tag}>{REDACTED}</{tag}>" if is_credential_name(tag) and not says_yes_or_no(value) else match.group(0)


def _hook_url(match: re.Match[str]) -> str:
    url = match.group(0)
    if "hook" not in url.lower():
        return url
    head, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")

    def segment(part: re.Match[str]) -> str:
        text = part.group(0)
        letters = [c for c in text if c.isalpha()]
        keyish = any(c.isdigit() for c in text) or (
            letters and not all(c.islower() for c in letters) and any(c.islower() for c in letters[1:])
        )
        if not keyish or re.fullmatch(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*", text) or text.startswith(REDACTED):
            return text
        return REDACTED

    return f"{head}://{host}{slash}{_SEGMENT.sub(segment, '/' + path)[1:] if path else ''}"


def judge_percent(value: str) -> str:
    """Tokens with percent-encoding, judged decoded too: ``token%3Dx`` hides ``token=x`` from the pair rule."""
    if "%" not in value or _PERCENT.search(value) is None:
        return value
    return "".join(_percent_token(token) if "%" in token else token for token in _SPACES.split(value))


def _percent_token(token: str) -> str:
    try:
        decoded = urllib.parse.unquote(token, errors="strict")
    except UnicodeDecodeError:
        return token
    if decoded == token:
        return token
    judged = redact_equals_pairs(apply_rules(decoded, _TEXT_RULES))
    return judged if judged != decoded else token


def _flag_value(match: re.Match[str]) -> str:
    """``--password SECRET`` inside a string (a shell line): the value after a credential flag."""
    lead, flag, value = match.groups()
    if says_yes_or_no(value) or value.startswith(REDACTED):
        return match.group(0)
    if not is_credential_name(flag) and not _chosen_under(value, flag):
        return match.group(0)
    return f"{lead}{REDACTED}"


def _chosen_under(value: str, name: str) -> bool:
    """A chosen password as the value of a flag or pair whose name does not say what it is (``--admin Sommer2024``)."""
    return looks_chosen_password(value) and not says_what_it_is(name)


def redact_blocks(value: str) -> str:
    """Lines of a YAML block scalar (``password: |``) under a credential key become ``<redacted>``."""
    lines = value.split("\n")
    out: list[str] = []
    hiding: int | None = None  # the indent of the credential key whose block is being dropped
    for line in lines:
        if hiding is not None:
            indent = len(line) - len(line.lstrip(" \t"))
            if not line.strip() or indent > hiding:
                if not out[-1].endswith(REDACTED):
                    out[-1] = f"{out[-1]} {REDACTED}"
                continue
            hiding = None
        block = _BLOCK_SCALAR.match(line)
        if block is not None and holds_credential(block.group(3)):
            hiding = len(block.group(1))
        out.append(line)
    return "\n".join(out)


#: (pattern, replacement) pairs applied to every string; the replacement keeps what is not secret.
Replacement: TypeAlias = str | Callable[[re.Match[str]], str]
VALUE_RULES: Final[tuple[tuple[re.Pattern[str], Replacement], ...]] = (
    # Every armoured block: PEM keys and certificates, PGP, OpenSSH (also when the END line is cut off).
    (re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*?(?:-----END [A-Z0-9 ]+-----|\Z)", re.DOTALL), REDACTED),
    # Userinfo in any URL: scheme://user:password@host, scheme://token@host (a plain user name alone,
    # as in ssh://git@host, is kept: see _userinfo).
    (re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}://)(\S{1,512}?)@(?=[^\s@]{0,512}(?:\s|$))"), _userinfo),
    (re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}://)([^\s/?#@]{1,512})@"), _userinfo),
    # JWTs (and JWS/JWE compact forms) anywhere.
    (re.compile(r"\beyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*"), REDACTED),
    # Scheme credentials inside longer values.
    (
        re.compile(
            r"\b(Basic|Bearer|Token|Digest|Negotiate|bearer|basic|token)\s+"
            r"(?=[A-Za-z0-9._~+/=:-]{8,})(?=[A-Za-z0-9._~:-]*(?:\d|[+/=]|[a-z][A-Z]))[A-Za-z0-9._~+/=:-]+"
        ),
        rf"\1 {REDACTED}",
    ),
    # Provider token formats come from gitleaks' rule set (tokens.py, run first in apply_rules). Here only
    # what it lacks: the formats it has no rule for (Discord webhooks, `sk-` keys without OpenAI's
    # T3BlbkFJ marker as DeepSeek's and others', Vault recovery tokens, Docker Hub tokens, Google OAuth
    # access tokens, xAI keys), and looser shapes of formats whose gitleaks rule wants an exact length,
    # alphabet or entropy (`ghp_` + 36, AWS ids in base32 and not ending EXAMPLE, `SG.` 22.43, `hf_` + 34,
    # `xoxb-` digits, `hooks.slack.com` + 43, `AIza` + 35 then the key's end): a key shortened in a paste or a documentation example
    # still goes, since a dropped look-alike costs the gate a word and a kept key costs a credential.
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"), REDACTED),
    (re.compile(r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/[A-Za-z0-9/_-]+"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"), REDACTED),
    (re.compile(r"\bAIza[A-Za-z0-9_-]{35}"), REDACTED),
    (re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), REDACTED),  # Hugging Face
    (re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"), REDACTED),  # HashiCorp Vault
    (re.compile(r"\bdckr_pat_[A-Za-z0-9_-]{20,}"), REDACTED),  # Docker Hub
    (re.compile(r"\bya29\.[A-Za-z0-9_-]{20,}"), REDACTED),  # Google OAuth access token
    (re.compile(r"\bxai-[A-Za-z0-9]{40,}"), REDACTED),
    # Command lines, in args and in `sh -c` strings: mysql's password glued to its flag (-pSECRET),
    # curl/wget's user:password, and a credential flag's value after a space (--password SECRET).
    (
        re.compile(
            r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b[^|;&\n]{0,256}?\s-p)(?!\s)([^\s\"'|;&]+)"
        ),
        rf"\1{REDACTED}",
    ),
    (re.compile(r"((?<!\S)(?:-u|--user|--proxy-user|-U)[\s=]+[^\s:\"']{1,256}:)([^\s\"']+)"), rf"\1{REDACTED}"),
    (re.compile(r"((?<![^\s\"'])(--?[A-Za-z][\w.-]{0,63})\s+)(?!-)([^\s\"']+)"), _flag_value),
    # mysql's password glued to -p inside quotes (-p'x', -p"x")
    (
        re.compile(
            r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b[^|;&\n]{0,256}?\s-p)(['\"])([^'\"]{1,256})\2"
        ),
        rf"\1\2{REDACTED}\2",
    ),
    *((rule, _tool_flag) for rule in _TOOL_FLAG_RULES),
    (_SETCOOKIE, _tool_flag),
    (_OPENSSL_PASS, rf"\1{REDACTED}"),
    (_CHPASSWD, rf"\1\2{REDACTED}\1\4"),
    (_HTPASSWD, rf"\1{REDACTED}"),
    (_DSN_USERINFO, rf"\1{REDACTED}@"),
    (_ORACLE_USERINFO, rf"\1{REDACTED}@"),
    (_SQL_PASSWORD, rf"\1\2{REDACTED}\2"),
    (_XML_CREDENTIAL, _xml_credential),
    (_PGPASS_LINE, _pgpass_line),
    (_LOGIN_PAIR, lambda m: m.group(0) if _plain_word(m.group(2)) else f"{m.group(1)}{REDACTED}"),
    (_PROSE_SECRET, _prose_secret),
    (_HOOK_URL, _hook_url),
)
#: The rules a percent-decoded token is judged by again.
_TEXT_RULES: Final = VALUE_RULES
#: What a value must hold (lowercased) for each rule of :data:`VALUE_RULES` to have anything to match,
#: in the same order: most values hold none of them, and a rule not tried costs nothing (every string
#: of every object passes here). Empty: always tried.
_VALUE_NEEDLES: Final[tuple[tuple[str, ...], ...]] = (
    ("-----begin",), ("://",), ("://",), ("eyj",), ("basic", "bearer", "token", "digest", "negotiate"),
    ("gh", "github_pat_"), ("xox",), ("hooks.slack",), ("discord",),
    ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa"), ("aiza",), ("sk-",), ("sg.",), ("hf_",),
    ("hvs.", "hvb.", "hvr."), ("dckr_pat_",), ("ya29.",), ("xai-",), ("mysql", "mariadb"),
    ("-u", "--user", "--proxy-user"), ("-",), ("mysql", "mariadb"),
    *(tuple(p.split()[0].lower() for p in programs) for programs, flags in TOOL_PASSWORD_FLAGS if flags),
    ("setcookie",),
    ("pass:",), ("chpasswd",), ("htpasswd",), ("@",), ("@",), ("identified", "password"), ("</",), (":",),
    ("login", "logon", "credential", "user", "account"),
    ("password", "passwort", "kennwort", "passwd", "passphrase", "pwd", "mot de passe", "contrase", "senha",
     "wachtwoord", "hasło", "haslo", "lösenord", "losenord", "salasana", "adgangskode", "passord", "пароль",
     "密码", "パスワード", "비밀번호", "requirepass", "masterauth"),
    ("hook",),
)  # fmt: skip
if len(_VALUE_NEEDLES) != len(VALUE_RULES):  # pragma: no cover - a rule added without its needles
    raise AssertionError("each value rule needs its needles")
_MORE_NEEDLES: Final = (
    "pin",
    "passcode",
    "otp",
    "key",
    "token",
    "code",
    "clé",
    "cle",
    "clave",
    "chiave",
    "schl",
    "glass",
)
_NEEDLES_OF: Final = {
    **{
        id(pattern): frozenset(needles)
        for (pattern, _), needles in zip(VALUE_RULES, _VALUE_NEEDLES, strict=True)
        if needles
    },
    id(_PROSE_SECRET_MORE): frozenset(_MORE_NEEDLES),
}
_ALL_NEEDLES: Final = tuple(sorted({needle for needles in (*_VALUE_NEEDLES, _MORE_NEEDLES) for needle in needles}))
#: Extra rules for strings taken from objects, which may hold YAML or headers (``Authorization: Basic x``;
#: ``password: x`` is :data:`COLON_PAIR`). Not applied to rendered document text, whose own layout is
#: ``field: words``.
RAW_VALUE_RULES: Final[tuple[tuple[re.Pattern[str], Replacement], ...]] = (
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*)(?:[A-Za-z]+\s+)?[^\s,;\"']+"), rf"\1{REDACTED}"),
    (_PROSE_SECRET_MORE, _prose_secret),  # PIN is 4821, the API key is x, la clave es x, recovery code: x
)


def apply_rules(value: str, rules: tuple[tuple[re.Pattern[str], Replacement], ...]) -> str:
    """Provider token formats (:mod:`.tokens`), then each rule in order, skipping those whose needles the
    value does not hold: the needles present are found once (a substring test each, exact), not once per rule."""
    lowered = value.lower()
    tokens = redact_tokens(value, lowered=lowered)  # provider formats, from gitleaks' rule set
    if tokens != value:
        value, lowered = tokens, tokens.lower()
    present = {needle for needle in _ALL_NEEDLES if needle in lowered}
    for pattern, replacement in rules:
        needles = _NEEDLES_OF.get(id(pattern))
        if needles is not None and present.isdisjoint(needles):
            continue
        value = pattern.sub(replacement, value)
    return value
