"""Config text judged as its format is written: each value by the name it stands under, the shape kept.

A CR field or an annotation often carries a whole config file: a ``.netrc``, an ``msmtprc``, a
postfix ``sasl_passwd`` map, a Kafka JAAS section, a Telegraf TOML, an INI file, a pgbouncer
userlist, Java properties, Terraform variables. A regex over the blob sees ``password`` only where
the word stands next to its value; in these formats the name is a token, a line, a brace or a
position away (``user_alice="x"`` is a password in JAAS; the second field of a userlist line is one
whatever the user is called). So :func:`redact_config` recognises the format, reads it with its
grammar (:mod:`tomllib` and :mod:`configparser` where a maintained parser exists, a small grammar
here or in :mod:`.assignments` where none is among our dependencies), and hands each value to the
gate's judgement under its name. A value the gate drops becomes ``<redacted>`` in place: the key,
the quotes and every other line stay, so ``host = db.example.com`` and ``port = 5432`` survive next
to ``password = <redacted>``.

Text that no grammar reads whole returns unchanged, and the gate's usual rules run after this in
every case, so a text this module does not recognise is judged exactly as before.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Callable, Iterator
from typing import Final

from kubevec.inference.redaction.assignments import (
    NotThisGrammar,
    Setting,
    hcl_settings,
    refers,
    toml_like_settings,
    toml_settings,
)
from kubevec.inference.redaction.names import is_credential_name, name_words, says_yes_or_no
from kubevec.inference.redaction.vocabulary import REDACTED

#: The gate's judgement of one value under its name: the value as it may be kept (``<redacted>`` or
#: partly replaced when it holds a credential).
Judge = Callable[[str, str], str]

#: Config text longer than this is judged by the gate's usual rules only (strings reach here cut to
#: 32 KiB already); and a text of more settings than this is not read setting by setting.
MAX_CONFIG_CHARS: Final = 32_768
MAX_SETTINGS: Final = 4_096


def redact_config(text: str, *, judge: Judge) -> str:
    """``text`` with every value its format puts under a credential name (or position) replaced by
    ``<redacted>``; ``text`` itself when it is no config text this module reads."""
    if len(text) > MAX_CONFIG_CHARS or not _may_be_config(text):
        return text
    if "LoginModule" in text:  # a JAAS entry may sit in a properties line (sasl.jaas.config=...): read first
        text = _rewrite(text, _read(_jaas, text), judge=judge)
    if "]" in text:  # likewise a sasl_passwd entry in a command that writes the file
        text = _rewrite(text, _sasl_entries(text), judge=judge)
    return _rewrite(text, _settings(text), judge=judge)


def _rewrite(text: str, settings: list[Setting], *, judge: Judge) -> str:
    if not settings or len(settings) > MAX_SETTINGS:
        return text
    out: list[str] = []
    at = 0
    for setting in sorted(settings, key=lambda s: s.start):
        if setting.start < at:
            continue  # overlapping readings: the first one stands
        value = text[setting.start : setting.end]
        kept = _kept(setting, value, judge=judge)
        if kept != value:
            out.append(text[at : setting.start])
            out.append(kept)
            at = setting.end
    out.append(text[at:])
    return "".join(out)


def _kept(setting: Setting, value: str, *, judge: Judge) -> str:
    if not value.strip() or says_yes_or_no(value) or value.startswith(REDACTED):
        return value  # auth on, password = false, password = ${DB_PASSWORD}: no secret in it
    if setting.credential:
        return REDACTED
    if not is_credential_name(setting.key) and _PATH.fullmatch(value):
        return value  # auth_file = /etc/pgbouncer/userlist.txt: where a secret is, judged by the usual rules after
    if value.lower() in AUTH_METHODS and name_words(setting.key)[-1:] == ("auth",):
        return value  # msmtp's auth plain, smtp_auth = login: how to log in, not with what
    return judge(setting.key, value)


#: An absolute or home path, nothing else.
_PATH: Final = re.compile(r"~?/[\w.@+-]{1,255}(?:/[\w.@+-]{1,255}){0,63}/?")
#: Names of ways to authenticate (SASL mechanisms, msmtp's ``auth``, pg's ``auth_type``): they name a method.
AUTH_METHODS: Final = frozenset(
    {"plain", "login", "cram-md5", "digest-md5", "scram-sha-1", "scram-sha-256", "scram-sha-512", "external",
     "gssapi", "ntlm", "oauthbearer", "xoauth2", "md5", "trust", "peer", "ident", "cert", "hba",
     "basic", "bearer", "digest", "none", "anonymous", "kerberos", "ldap", "oauth", "oidc", "saml", "mtls", "tls"}
)  # fmt: skip


def _may_be_config(text: str) -> bool:
    """Cheap first look (every string of every object passes): several lines, or one line in a
    format that fits on one (a JAAS entry, a netrc line, a userlist or sasl_passwd entry, a Terraform
    block or TOML inline table)."""
    if "\n" in text.strip():
        return True
    head = text.lstrip()[:1]
    return (
        "LoginModule" in text
        or text.lstrip().startswith(("machine ", "default "))
        or head in ('"', "[")
        or ("{" in text and "=" in text)
        or _SASL_LINE.fullmatch(text.strip()) is not None
    )


def _settings(text: str) -> list[Setting]:
    """The values of the first grammar that reads the whole text; none when no grammar does."""
    for reader in _READERS:
        settings = _read(reader, text)
        if settings:
            return settings
    return []


def _read(reader: Callable[[str], list[Setting]], text: str) -> list[Setting]:
    try:
        return reader(text)
    except NotThisGrammar:
        return []


# -- line grammars: one entry per line, every line must be one ------------------------------------

#: pgbouncer's ``auth_file``: ``"user" "password"`` where the password is plain, ``md5...`` or a SCRAM
#: verifier: each of them logs in (an md5 or SCRAM secret is what the server checks), so each goes.
_USERLIST_LINE: Final = re.compile(r'[ \t]*"(?:[^"\n]|""){0,256}"[ \t]+"((?:[^"\n]|""){0,1024})"[ \t]*(?:[#;][^\n]*)?')
#: postfix ``sasl_passwd``: ``[relay]:port user:password`` (or ``host``, ``@domain``, ``sender@domain``).
_SASL_LINE: Final = re.compile(
    r"[ \t]*(?:\[[^\]\s]{1,253}\](?::(?:\d{1,5}|[a-z][\w-]{0,31}))?|(?:[\w-]{1,63}\.){1,8}[A-Za-z][\w-]{0,62}:\d{1,5}"
    r"|(?:[\w-]{1,63}\.){2,8}[A-Za-z]{2,24}|[\w.+-]{0,64}@[\w.-]{1,253})"
    r"[ \t]+[^\s:]{1,256}:((?!//)\S{1,512})[ \t]*"
)
#: A sasl_passwd entry with its relay in brackets wherever it stands (``echo "[relay]:587 u:p" > sasl_passwd``):
#: a bracketed host or address, a port or service, then ``user:password``.
_SASL_ENTRY: Final = re.compile(
    r"\[[^\[\]\s\"']{0,252}[.:][^\[\]\s\"']{0,252}\](?::[\w-]{1,32})?[ \t]+[^\s:'\"]{1,256}:((?!//)[^\s'\"]{1,512})"
)
#: ``key value``, ``key=value`` or ``key: value``: msmtprc, redis.conf, Java properties, dotenv. A key
#: before a space starts lower case (``password x``), so a sentence does not read as a setting.
_DIRECTIVE_LINE: Final = re.compile(
    r"[ \t]*(?:export[ \t]+)?([A-Za-z_][\w.\-/]{0,127})([ \t]*[=:][ \t]*|[ \t]+|[ \t]*$)([^\n]{0,4096}?)[ \t]*"
)
_COMMENT: Final = re.compile(r"[ \t]*(?:[#;!]|//)")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, line)`` of every line that is not blank or a comment."""
    at = 0
    for line in text.split("\n"):
        if line.strip() and _COMMENT.match(line) is None:
            yield at, line
        at += len(line) + 1


def _userlist(text: str) -> list[Setting]:
    return _every_line(text, _USERLIST_LINE, key="password", credential=True)


def _sasl_passwd(text: str) -> list[Setting]:
    return _every_line(text, _SASL_LINE, key="password", credential=True)


def _sasl_entries(text: str) -> list[Setting]:
    return [
        Setting(key="password", start=entry.start(1), end=entry.end(1), credential=True)
        for entry in _SASL_ENTRY.finditer(text)
    ]


def _every_line(text: str, line_grammar: re.Pattern[str], *, key: str, credential: bool) -> list[Setting]:
    settings = []
    for at, line in _lines(text):
        match = line_grammar.fullmatch(line.rstrip("\r"))
        if match is None:
            raise NotThisGrammar(line_grammar.pattern)
        settings.append(Setting(key=key, start=at + match.start(1), end=at + match.end(1), credential=credential))
    return settings


def _directives(text: str) -> list[Setting]:
    """Java properties (``=``, ``:`` or spaces between key and value, ``\\`` continuing a line),
    msmtprc and redis-style directives, dotenv files: at least two settings, every line one."""
    settings: list[Setting] = []
    continued: Setting | None = None
    for at, line in _lines(text):
        line = line.rstrip("\r")
        if continued is not None:  # the value goes on: a credential's continuation goes with it
            continued = Setting(key=continued.key, start=continued.start, end=at + len(line.rstrip(" \t\\")))
            settings[-1] = continued
            continued = continued if line.endswith("\\") else None
            continue
        entry = _entry_line(at, line)
        if entry is not None:  # a sasl_passwd or userlist line among the settings
            settings.append(entry)
            continue
        match = _DIRECTIVE_LINE.fullmatch(line)
        if match is None or (match.group(2).isspace() and not match.group(1)[0].islower() and match.group(1)[0] != "_"):
            raise NotThisGrammar("not a setting")
        if not match.group(3):
            continue  # a key without a value (an msmtp ``defaults``, a YAML-ish parent)
        settings.append(Setting(key=match.group(1), start=at + match.start(3), end=at + match.end(3)))
        continued = settings[-1] if line.endswith("\\") else None
    if len(settings) < 2:
        raise NotThisGrammar("one line: the gate's own rules read it")
    return [_unquoted(text, s) for s in settings]


def _entry_line(at: int, line: str) -> Setting | None:
    for grammar in (_SASL_LINE, _USERLIST_LINE):
        match = grammar.fullmatch(line)
        if match is not None:
            return Setting(key="password", start=at + match.start(1), end=at + match.end(1), credential=True)
    return None


def _unquoted(text: str, setting: Setting) -> Setting:
    """The value inside its quotes (``password="x"`` keeps its quotes around ``<redacted>``)."""
    value = text[setting.start : setting.end]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return Setting(key=setting.key, start=setting.start + 1, end=setting.end - 1, credential=setting.credential)
    return setting


# -- token grammars ---------------------------------------------------------------------------------

_TOKEN: Final = re.compile(r'"(?:[^"\\\n]|\\.){0,1024}"|\S{1,1024}')
#: netrc's keywords and whether each takes a value; ``password`` and ``account`` (a second password) go.
_NETRC: Final = {"machine": True, "default": False, "login": True, "password": True, "account": True, "port": True}


def _netrc(text: str) -> list[Setting]:
    """``machine h login u password p`` in any layout (one line, one token a line); ``macdef`` ends it."""
    tokens = [t for t in _TOKEN.finditer(_without_comments(text))]
    if not tokens or tokens[0].group(0) not in ("machine", "default"):
        raise NotThisGrammar("netrc starts with machine or default")
    settings: list[Setting] = []
    index = 0
    while index < len(tokens):
        word = tokens[index].group(0)
        if word == "macdef":
            break
        if word not in _NETRC:
            raise NotThisGrammar(f"netrc keyword {word[:32]!r}")
        if _NETRC[word]:
            if index + 1 >= len(tokens):
                raise NotThisGrammar("netrc keyword without its value")
            value = tokens[index + 1]
            if word in ("password", "account"):
                settings.append(
                    _unquoted(text, Setting(key=word, start=value.start(), end=value.end(), credential=True))
                )
            index += 1
        index += 1
    return settings


def _without_comments(text: str) -> str:
    """``# ...`` to the end of its line blanked out with spaces, so offsets stay those of ``text``."""
    return re.sub(r"(?m)^[ \t]*#[^\n]*", lambda m: " " * len(m.group(0)), text)


#: A JAAS login module entry: ``org.apache...PlainLoginModule required``, then options up to ``;``.
_JAAS_ENTRY: Final = re.compile(r"[\w.$]{0,256}LoginModule\s+(?:required|requisite|sufficient|optional)\b")
_JAAS_OPTION: Final = re.compile(r"\s*([\w.-]{1,128})\s*=\s*(\"(?:[^\"\\]|\\.){0,4096}\"|[^\s;\"]{1,4096})")
#: Kafka's PlainLoginModule (and Jetty's, ZooKeeper's DigestLoginModule) define users as ``user_NAME="password"``.
_JAAS_USER: Final = re.compile(r"user_\w+")


def _jaas(text: str) -> list[Setting]:
    if "LoginModule" not in text:
        raise NotThisGrammar("no login module")
    settings: list[Setting] = []
    for entry in _JAAS_ENTRY.finditer(text):
        at = entry.end()
        while (option := _JAAS_OPTION.match(text, at)) is not None:
            key = option.group(1)
            credential = _JAAS_USER.fullmatch(key) is not None
            settings.append(
                _unquoted(text, Setting(key=key, start=option.start(2), end=option.end(2), credential=credential))
            )
            at = option.end()
    if not settings:
        raise NotThisGrammar("no JAAS options")
    return settings


# -- INI, by configparser ---------------------------------------------------------------------------

_INI_OPTION: Final = re.compile(r"([^\s=:\[][^=:\n]{0,255}?)[ \t]*[=:][ \t]*([^\n]*?)[ \t]*")
_INI_SECTION: Final = re.compile(r"[ \t]*\[[^\]\n]{1,256}\][ \t]*")


def _ini(text: str) -> list[Setting]:
    """An INI file as :mod:`configparser` reads it (sections, ``=`` or ``:``, indented continuation
    lines); a section named for a credential (``[credentials]``) has every value judged as one."""
    if "\n" not in text.strip() or _INI_SECTION.fullmatch(text.lstrip("\n").split("\n", 1)[0].rstrip("\r")) is None:
        raise NotThisGrammar("INI starts with a section")
    parser = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True)
    try:
        parser.read_string(text)
    except (configparser.Error, ValueError) as exc:
        raise NotThisGrammar("not INI") from exc
    settings: list[Setting] = []
    section = ""
    for at, line in _lines(text):
        line = line.rstrip("\r")
        if _INI_SECTION.fullmatch(line):
            section = line.strip()[1:-1]
            continue
        if line[:1] in " \t" and settings:  # a continuation line belongs to the value above
            last = settings[-1]
            settings[-1] = Setting(key=last.key, start=last.start, end=at + len(line), credential=last.credential)
            continue
        option = _INI_OPTION.fullmatch(line)
        if option is None:
            continue  # a key without a value (allow_no_value)
        settings.append(
            _unquoted(
                text,
                Setting(
                    key=option.group(1),
                    start=at + option.start(2),
                    end=at + option.end(2),
                    credential=is_credential_name(section) and not refers(option.group(1)),
                ),
            )
        )
    return settings


#: In the order tried: the strictest grammars first, so a text is read by the one it was written in.
_READERS: Final[tuple[Callable[[str], list[Setting]], ...]] = (
    _userlist,
    _sasl_passwd,
    _netrc,
    hcl_settings,
    toml_settings,
    _ini,
    _directives,
    toml_like_settings,
)
