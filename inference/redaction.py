"""What must never reach a document or a log, removed before anything else looks at an object.

Absolute rules: Secret ``data``/``stringData`` values, ConfigMap ``data``/``binaryData`` values,
``kubectl.kubernetes.io/last-applied-configuration`` and ``managedFields`` are dropped. Key *names*
of Secrets and ConfigMaps survive (as :attr:`Redacted.data_keys`) because they say what an object holds.

Everywhere else (custom-resource specs, annotations, labels, every string of every document),
credentials are judged twice, because either judgement alone misses real cases:

- **by name** (:func:`is_credential_name`): the field name is split into words at camelCase,
  snake_case, kebab-case and dot boundaries, and judged against :data:`CREDENTIAL_WORDS` and
  :data:`CREDENTIAL_PHRASES`. Whole words, so ``passwordList`` and ``db_password`` match but
  ``bypass`` or ``tokenizer`` do not; a name that *ends* in a short form (``dbPass``, ``rootPw``:
  :data:`CREDENTIAL_LAST_WORDS`) or runs a credential word into a prefix (``PGPASSWORD``:
  :data:`CREDENTIAL_SUFFIXES`) matches too. A name that ends in a reference word (``secretName``,
  ``passwordSecretRef``, ``tokenUrl``) points at a credential instead of holding one and is kept.
  Under a credential name *every* value type is dropped: strings, numbers, booleans, lists and maps
  (a map's reference fields such as ``name`` survive), and in a list of strings the item after a
  credential flag (``["--password", "x"]``) too.
- **by value** (:func:`redact_text`): userinfo in any URL, ``Basic``/``Bearer`` credentials and
  ``Authorization:`` headers, JWTs, every ``-----BEGIN ...-----`` block (PEM, PGP, OpenSSH),
  well-known token formats (GitHub, GitLab, Slack, AWS, Google, Stripe, npm, OpenAI-style keys,
  Azure SAS signatures, Slack/Discord webhooks), and ``NAME=value`` pairs inside longer strings whose
  NAME is a credential name (env files, flags, connection strings, query strings; also ``NAME: value``
  in strings taken from objects, which may hold YAML, JSON or headers). Only the matched part is
  replaced, so the rest of a sentence stays searchable.
- long high-entropy strings under *suspicious* names (:data:`SUSPICIOUS_WORDS`: ``signature``,
  ``hmac``, ``cookie``...) that are not credential names on their own.
- **deny by default** (:func:`looks_machine_generated`): every run of 16 or more characters without
  spaces, wherever it stands and whatever its field is called, is dropped when it looks generated
  (base64 or hex alphabet, high entropy, the character classes changing as often as in random
  text): AWS secret access keys away from their ``AKIA`` id, a PEM body split across list items,
  tokens of formats nobody listed. Kept, because they identify rather than authorise: image and
  content digests (``sha256:...``), and UUIDs and hex ids (commit SHAs, checksums) under identifying
  names (:data:`IDENTIFYING_WORDS`: ``uid``, ``revision``, ``commit``, ``checksum``...).

Names are judged in the languages Kubernetes users write them in (:data:`FOREIGN_CREDENTIAL_WORDS`:
``passwort``, ``motDePasse``, ``contraseña``, ``senha``, ``пароль``, ``密码``, ``パスワード``...),
and a ``{name: X, value: Y}`` pair (also ``key``/``parameter`` with ``value``/``default``) loses
``Y`` wherever it appears when ``X`` is a credential name, as an env var does in a Pod.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
import re
import string
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias, cast

import yaml

from kubevec.core.errors import TooComplex
from kubevec.inference.bodies import Body
from kubevec.inference.bounds import CUT, MAX_DEPTH, Budget, cut_string

REDACTED: Final = "<redacted>"
LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
#: Annotations that carry whole object copies or credentials, dropped whatever their value.
DROPPED_ANNOTATIONS: Final = frozenset(
    {
        LAST_APPLIED,
        "kubernetes.io/service-account.uid",
        "openshift.io/token-secret.value",
        "deployment.kubernetes.io/revision",  # churns on every rollout; says nothing
    }
)

#: A field name containing one of these words holds a credential.
CREDENTIAL_WORDS: Final = frozenset(
    {
        "password",
        "passwords",
        "passwd",
        "passphrase",
        "passcode",
        "pwd",
        "secret",
        "secrets",
        "token",
        "tokens",
        "credential",
        "credentials",
        "creds",
        "dsn",
        "jwt",
        "bearer",
        "authorization",
        "kubeconfig",
        "apikey",
        "apikeys",
        "accesskey",
        "secretkey",
        "privatekey",
        "authtoken",
        "connectionstring",
        "connstr",
        "salt",
        "htpasswd",
        "psk",
        "bindpw",
        "bindpassword",
        "dbpass",
        "requirepass",
        "masterauth",
    }
)
#: A field name whose *last* word is one of these short forms holds a credential (``dbPass``, ``rootPw``);
#: elsewhere in a name they mean something else (``passThrough``).
CREDENTIAL_LAST_WORDS: Final = frozenset(
    {"pass", "pw", "pword", "pin", "otp", "totp", "hotp", "cred", "creds", "community", "psk"}
)
#: Run together in one word (``DBPASS``, ``rootpw``, ``PassWord``): a name ending in these holds a credential,
#: but for the English words that end so.
CREDENTIAL_RUN_ENDINGS: Final = ("pass", "passwd", "pwd", "pw", "password", "passphrase", "secret", "token")
NOT_CREDENTIAL_RUNS: Final = frozenset(
    {"bypass", "compass", "encompass", "overpass", "underpass", "trespass", "surpass", "impass", "multipass",
     "onepass", "firstpass", "secondpass", "subpass", "renderpass", "highpass", "lowpass", "bandpass"}
)  # fmt: skip
#: One unbroken word ending in one of these holds a credential (``PGPASSWORD``, ``csrftoken``).
CREDENTIAL_SUFFIXES: Final = ("password", "passwd", "passphrase", "secret", "token", "apikey")
#: A field name containing these adjacent words holds a credential (``secretAccessKey``, ``api_key``).
CREDENTIAL_PHRASES: Final = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("private", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("session", "key"),
        ("account", "key"),
        ("shared", "key"),
        ("license", "key"),
        ("client", "key"),
        ("tls", "key"),
        ("ssh", "key"),
        ("cert", "key"),
        ("auth", "key"),
        ("hmac", "key"),
        ("connection", "string"),
        ("conn", "string"),
        ("basic", "auth"),
        ("webhook", "url"),
        ("sas", "url"),
        ("otp", "seed"),
        ("totp", "seed"),
        ("mfa", "seed"),
        ("recovery", "code"),
        ("recovery", "codes"),
        ("backup", "codes"),
    }
)
#: A name that starts with one of these states a fact about a credential (``has-secret``,
#: ``enableBasicAuth``, ``createToken``): a yes/no value under it is kept, anything else is not.
PREDICATE_WORDS: Final = frozenset(
    {"has", "is", "enable", "enabled", "disable", "use", "uses", "with", "without", "no", "skip", "allow",
     "require", "requires", "create", "generate", "rotate", "auto", "inject", "sync", "manage", "mount"}
)  # fmt: skip
#: Values that answer yes or no: never a credential, whatever the name.
YES_NO: Final = frozenset({"true", "false", "yes", "no", "on", "off", "enabled", "disabled", "none", "null"})
#: A field name whose *last* word is one of these refers to a credential rather than holding it.
REFERENCE_WORDS: Final = frozenset(
    {
        "name",
        "names",
        "ref",
        "refs",
        "reference",
        "selector",
        "namespace",
        "path",
        "file",
        "filename",
        "dir",
        "mount",
        "kind",
        "type",
        "mode",
        "length",
        "size",
        "ttl",
        "duration",
        "period",
        "lifetime",
        "expiry",
        "expiration",
        "expires",
        "enabled",
        "disabled",
        "required",
        "policy",
        "format",
        "algorithm",
        "version",
        "field",
        "header",
        "source",
        "provider",
        "store",
        "template",
        "rotation",
        "strategy",
        "url",
        "uri",
        "endpoint",
        "audience",
        "issuer",
        "scope",
        "scopes",
    }
)
#: Weaker hints: a long high-entropy string under a name with one of these words is dropped.
SUSPICIOUS_WORDS: Final = frozenset(
    {
        "key",
        "keys",
        "auth",
        "cert",
        "signature",
        "sig",
        "hmac",
        "hash",
        "seed",
        "nonce",
        "cookie",
        "session",
        "license",
        "webhook",
        "private",
        "access",
        "client",
        "sas",
        "otp",
    }
)
ENTROPY_MIN_LENGTH: Final = 16
ENTROPY_MIN_BITS: Final = 3.5

#: Credential words in other languages, accents removed (``contraseña`` -> ``contrasena``), matched as
#: whole words or as a name's words run together (``motDePasse`` -> ``motdepasse``).
FOREIGN_CREDENTIAL_WORDS: Final = frozenset(
    {
        "passwort", "kennwort", "geheimnis", "zugangsdaten",  # German
        "motdepasse", "mdp", "jeton", "identifiants",  # French
        "contrasena", "clave", "secreto", "credenciales",  # Spanish
        "senha", "segredo", "credenciais",  # Portuguese
        "segreto", "credenziali", "parola", "parolachiave",  # Italian (parola d'ordine), Romanian, Turkish
        "wachtwoord", "geheim",  # Dutch
        "haslo", "heslo", "lozinka", "geslo", "jelszo", "sifre", "parolasi",  # Polish, Czech, Croatian, ...
        "salasana", "losenord", "passord", "adgangskode", "lykilord",  # Nordic
        "katasandi", "sandi", "matkhau",  # Indonesian, Vietnamese
    }
)  # fmt: skip
#: Credential words in scripts without case, matched anywhere in a name (``数据库密码``).
FOREIGN_CREDENTIAL_PARTS: Final = (
    "пароль", "секрет", "токен", "ключапи", "апиключ",  # Russian, Ukrainian
    "密码", "密碼", "口令", "密钥", "密鑰", "令牌", "秘钥",  # Chinese
    "パスワード", "暗証番号", "秘密鍵", "トークン", "シークレット",  # Japanese
    "비밀번호", "암호", "토큰", "비밀키",  # Korean
    "كلمةالمرور", "كلمةالسر", "رمزالدخول",  # Arabic
    "סיסמה", "סיסמא",  # Hebrew
    "पासवर्ड", "गुप्तशब्द",  # Hindi
    "รหัสผ่าน",  # Thai
    "κωδικός", "συνθηματικό",  # Greek
)  # fmt: skip
#: A field whose name ends in one of these words holds an identifier, not a credential: a UUID or a
#: hex id under it (a commit SHA, a checksum) is kept by the deny-by-default rule.
IDENTIFYING_WORDS: Final = frozenset(
    {
        "uid", "uuid", "id", "ids", "sha", "commit", "revision", "rev", "digest", "hash", "checksum", "etag",
        "fingerprint", "version", "generation", "ref", "build", "image", "imageid", "trace", "span", "request",
        "correlation", "contenthash", "texthash", "from",
    }
)  # fmt: skip

_WORD_BOUNDARY = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^\W\dA-Za-z_]+")

#: Pair names that are not credential names in a schema but are in a query or connection string.
_PAIR_NAMES: Final = re.compile(r"(?i)(?:sig|signature|x-amz-signature|accountkey|sharedaccesskey)")
#: ``NAME=value`` anywhere (env files, flags, query and connection strings); the name is judged by
#: :func:`_holds_credential`. ``"NAME": value`` and ``NAME: value`` are :data:`_COLON_PAIR` (raw strings only):
#: a quoted name (JSON) may have no space after its colon, a bare one (YAML, headers) must, so an
#: image reference (``acme/token-service:1.4.2``) is not a pair; neither side crosses a line.
_PAIR_VALUE: Final = r"(\"[^\"]*\"|'[^']*'|[^\s&;,\"'|}]+)"
_EQUALS_NAME: Final = re.compile(r"(?<![\w.])([A-Za-z_][\w.-]{0,127})[ \t]*=[ \t]*")
_PAIR_VALUE_AT: Final = re.compile(_PAIR_VALUE)
_SHORT_VALUE_AT: Final = re.compile(r"\"[^\"]{0,64}\"|'[^']{0,64}'|[^\s&;,\"'|}]{1,65}")
_COLON_PAIR: Final = re.compile(
    rf"(?<![\w./@:-])(?:([\"'])([A-Za-z_][\w.-]{{0,127}})\1([ \t]*:[ \t]*)|()([A-Za-z_][\w.-]{{0,127}})([ \t]*:[ \t]+)){_PAIR_VALUE}"
)
#: A YAML block scalar under a credential key: ``password: |`` and the more-indented lines after it.
_BLOCK_SCALAR: Final = re.compile(r"(?m)^([ \t]*)([\"']?)([A-Za-z_][\w.-]{0,127})\2[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*$")
#: A command-line flag on its own (its value is the next item of the list).
_FLAG: Final = re.compile(r"--?[A-Za-z][\w.-]*")


def _redact_equals_pairs(value: str) -> str:
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
        credential = _holds_credential(name)
        # a credential's value is read whole; any other pair's only as far as a chosen password can reach
        # (a whole read from every NAME= of a=a=a=... was quadratic)
        pair_value = (_PAIR_VALUE_AT if credential else _SHORT_VALUE_AT).match(value, match.end())
        if pair_value is None or _says_yes_or_no(pair_value.group(0)) or pair_value.group(0).startswith(REDACTED):
            continue
        if not credential and not _chosen_under(pair_value.group(0).strip("\"'"), name):
            continue
        out.append(value[at : match.end()])
        out.append(REDACTED)
        at = pair_value.end()
    out.append(value[at:])
    return "".join(out)


def _colon_pair(match: re.Match[str]) -> str:
    quoted, quoted_name, quoted_separator, _, bare_name, bare_separator, value = match.groups()
    quote, name, separator = (quoted, quoted_name, quoted_separator) if quoted else ("", bare_name, bare_separator)
    if not _holds_credential(name) or _says_yes_or_no(value) or value in ("{", "[", "|", ">"):
        return match.group(0)
    return f"{quote}{name}{quote}{separator}{REDACTED}"


def _userinfo(match: re.Match[str]) -> str:
    """The userinfo of a URL, up to the last ``@`` of its authority: a password may hold ``@``, ``/`` or
    ``#`` unencoded (``amqp://guest:p@ss@rabbit``). A path that holds an ``@`` is not userinfo
    (``https://registry.npmjs.org/@acme/ui``, ``https://host:8080/x@y``)."""
    scheme, userinfo = match.groups()
    if userinfo.startswith(REDACTED):
        return match.group(0)
    user, colon, _ = userinfo.partition(":")
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


def _tool_flag(match: re.Match[str]) -> str:
    lead, quote, value = match.groups()
    if value.startswith(REDACTED) or value.startswith("-") or _says_yes_or_no(value):
        return match.group(0)
    return f"{lead}{quote}{REDACTED}{quote}"


#: A credential word in prose or config text, a connecting word or sign, then the value (``The password
#: is x``, ``Das Passwort lautet x``, ``requirepass x``, ``password x`` in a .netrc).
_CUE: Final = (
    r"password|passwort|kennwort|passwd|passphrase|pwd|mot de passe|contrase[ñn]a|senha|wachtwoord|"
    r"has[łl]o|l[öo]senord|salasana|adgangskode|passord|пароль|密码|パスワード|비밀번호|requirepass|masterauth"
)
_PROSE_SECRET: Final = re.compile(
    rf"(?i)(?<![\w-])({_CUE})(?![\w-])([ \t]*(?:(?:is|was|lautet|ist|est|es|é|è|e|era|wird|sera|:|=|->)[ \t]+|[ \t]+))"
    r"(['\"«„]?)([^\s'\"»“<>(\[{&|;$-][^\s'\"»“<>]{0,255})"
)


def _prose_secret(match: re.Match[str]) -> str:
    """The value after a credential word: always after a config directive or a connecting word; after a
    bare space only when it does not read as a plain word (``password rotation is handled`` stays)."""
    cue, connector, quote, value = match.groups()
    bare = connector.strip() == ""
    word = re.fullmatch(r"[^\W\d_]+[.,;:!?)]?", value) is not None
    directive = cue.lower() in ("requirepass", "masterauth")
    if value.startswith(REDACTED) or _says_yes_or_no(value.rstrip(".,;:!?")):
        return match.group(0)
    if not directive and word and (bare or value.lower().rstrip(".,;:!?") in _PROSE_WORDS or value[:1].islower()):
        return match.group(0)
    trail = value[-1] if value[-1] in ".,;:!?)" and len(value) > 1 else ""
    return f"{cue}{connector}{quote}{REDACTED}{trail}"


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
_PGPASS_LINE: Final = re.compile(r"(?m)^([^\s:]{1,253}:(?:\d{1,5}|\*):[^\s:]{1,128}:[^\s:]{1,128}:)(\S{1,256})$")
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
    return f"<{tag}>{REDACTED}</{tag}>" if is_credential_name(tag) and not _says_yes_or_no(value) else match.group(0)


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


def _judge_percent(value: str) -> str:
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
    judged = _redact_equals_pairs(_apply_rules(decoded, _TEXT_RULES))
    return judged if judged != decoded else token


def _flag_value(match: re.Match[str]) -> str:
    """``--password SECRET`` inside a string (a shell line): the value after a credential flag."""
    lead, flag, value = match.groups()
    if _says_yes_or_no(value) or value.startswith(REDACTED):
        return match.group(0)
    if not is_credential_name(flag) and not _chosen_under(value, flag):
        return match.group(0)
    return f"{lead}{REDACTED}"


def _chosen_under(value: str, name: str) -> bool:
    """A chosen password as the value of a flag or pair whose name does not say what it is (``--admin Sommer2024``)."""
    return looks_chosen_password(value) and not says_what_it_is(name)


def _says_yes_or_no(value: str) -> bool:
    return value.strip("\"'").lower() in YES_NO


def _redact_blocks(value: str) -> str:
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
        if block is not None and _holds_credential(block.group(3)):
            hiding = len(block.group(1))
        out.append(line)
    return "\n".join(out)


def _redact_structured(value: str) -> str | None:
    """A string that holds a JSON or YAML document, scrubbed as a structure (nested credentials too).

    None when it is not one, or when nothing in it is a credential (the text is then left as it
    was, formatting and all)."""
    stripped = value.strip()
    if _nesting(stripped) > MAX_DEPTH:
        return None  # judged as text: the parsers recurse once per level
    try:
        if stripped[:1] in ("{", "["):
            try:
                data = json.loads(stripped)
            except ValueError:
                data = None
            if isinstance(data, dict | list):
                cleaned = scrub(data, budget=Budget(nodes=MAX_STRUCTURED_NODES))
                return json.dumps(cleaned, ensure_ascii=False) if cleaned != data else None
        if "\n" in stripped and ":" in stripped and len(stripped) <= MAX_STRUCTURED:
            try:
                data = yaml.safe_load(stripped)
            except yaml.YAMLError:
                return None
            if isinstance(data, dict):
                cleaned = scrub(data, budget=Budget(nodes=MAX_STRUCTURED_NODES))
                if cleaned != data:
                    return yaml.safe_dump(
                        cleaned, sort_keys=False, allow_unicode=True, default_flow_style=False
                    ).strip()
    except (TooComplex, RecursionError):
        return REDACTED  # a document inside a string that expands past the bounds (YAML aliases): dropped whole
    return None


def _nesting(value: str) -> int:
    """How deep ``[``/``{`` nest in ``value`` (quotes ignored: an over-estimate only costs the parse)."""
    deepest = depth = 0
    for opened in _BRACKETS.finditer(value):
        depth = depth + 1 if opened.group(0) in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
    return deepest


_BRACKETS: Final = re.compile(r"[\[\]{}]")
#: Values a document inside a string may expand to (YAML aliases share nodes: a few lines can name billions).
MAX_STRUCTURED_NODES: Final = 20_000


#: Embedded YAML longer than this is judged line by line only.
MAX_STRUCTURED: Final = 65_536


def _holds_credential(name: str) -> bool:
    return is_credential_name(name) or _PAIR_NAMES.fullmatch(name) is not None


#: (pattern, replacement) pairs applied to every string; the replacement keeps what is not secret.
Replacement: TypeAlias = str | Callable[[re.Match[str]], str]
_VALUE_RULES: Final[tuple[tuple[re.Pattern[str], Replacement], ...]] = (
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
    # Well-known token formats.
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), REDACTED),
    (re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"), REDACTED),
    (re.compile(r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/[A-Za-z0-9/_-]+"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"), REDACTED),
    (re.compile(r"\bAIza[A-Za-z0-9_-]{35}"), REDACTED),
    (re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), REDACTED),
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), REDACTED),
    (re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), REDACTED),  # Hugging Face
    (re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"), REDACTED),  # HashiCorp Vault
    (re.compile(r"\b(?:dop|doo|dor)_v1_[a-f0-9]{64}"), REDACTED),  # DigitalOcean
    (re.compile(r"\bdckr_pat_[A-Za-z0-9_-]{20,}"), REDACTED),  # Docker Hub
    (re.compile(r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"), REDACTED),  # Shopify
    (re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,}"), REDACTED),  # PyPI
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
    (_OPENSSL_PASS, rf"\1{REDACTED}"),
    (_CHPASSWD, rf"\1\2{REDACTED}\1\4"),
    (_HTPASSWD, rf"\1{REDACTED}"),
    (_DSN_USERINFO, rf"\1{REDACTED}@"),
    (_ORACLE_USERINFO, rf"\1{REDACTED}@"),
    (_SQL_PASSWORD, rf"\1\2{REDACTED}\2"),
    (_XML_CREDENTIAL, _xml_credential),
    (_PGPASS_LINE, rf"\1{REDACTED}"),
    (_LOGIN_PAIR, lambda m: m.group(0) if _plain_word(m.group(2)) else f"{m.group(1)}{REDACTED}"),
    (_PROSE_SECRET, _prose_secret),
    (_HOOK_URL, _hook_url),
)
#: The rules a percent-decoded token is judged by again.
_TEXT_RULES: Final = _VALUE_RULES
#: What a value must hold (lowercased) for each rule of :data:`_VALUE_RULES` to have anything to match,
#: in the same order: most values hold none of them, and a rule not tried costs nothing (every string
#: of every object passes here). Empty: always tried.
_VALUE_NEEDLES: Final[tuple[tuple[str, ...], ...]] = (
    ("-----begin",), ("://",), ("://",), ("eyj",), ("basic", "bearer", "token", "digest", "negotiate"),
    ("gh", "github_pat_"), ("glpat-",), ("xox",), ("hooks.slack",), ("discord",),
    ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa"), ("aiza",),
    ("_live_", "_test_"), ("npm_",), ("sk-",), ("sg.",), ("hf_",), ("hvs.", "hvb.", "hvr."), ("_v1_",),
    ("dckr_pat_",), ("shp",), ("pypi-age",), ("ya29.",), ("xai-",), ("mysql", "mariadb"),
    ("-u", "--user", "--proxy-user"), ("-",), ("mysql", "mariadb"),
    *(tuple(p.split()[0].lower() for p in programs) for programs, flags in TOOL_PASSWORD_FLAGS if flags),
    ("pass:",), ("chpasswd",), ("htpasswd",), ("@",), ("@",), ("identified", "password"), ("</",), (":",),
    ("login", "logon", "credential", "user", "account"),
    ("password", "passwort", "kennwort", "passwd", "passphrase", "pwd", "mot de passe", "contrase", "senha",
     "wachtwoord", "hasło", "haslo", "lösenord", "losenord", "salasana", "adgangskode", "passord", "пароль",
     "密码", "パスワード", "비밀번호", "requirepass", "masterauth"),
    ("hook",),
)  # fmt: skip
if len(_VALUE_NEEDLES) != len(_VALUE_RULES):  # pragma: no cover - a rule added without its needles
    raise AssertionError("each value rule needs its needles")
_NEEDLES_OF: Final = {
    id(pattern): frozenset(needles)
    for (pattern, _), needles in zip(_VALUE_RULES, _VALUE_NEEDLES, strict=True)
    if needles
}
_ALL_NEEDLES: Final = tuple(sorted({needle for needles in _VALUE_NEEDLES for needle in needles}))
#: Extra rules for strings taken from objects, which may hold YAML or headers (``Authorization: Basic x``;
#: ``password: x`` is :data:`_COLON_PAIR`). Not applied to rendered document text, whose own layout is
#: ``field: words``.
_RAW_VALUE_RULES: Final[tuple[tuple[re.Pattern[str], Replacement], ...]] = (
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*)(?:[A-Za-z]+\s+)?[^\s,;\"']+"), rf"\1{REDACTED}"),
)


def name_words(name: str) -> tuple[str, ...]:
    """``secretAccessKey`` -> (secret, access, key); snake, kebab, dots and digits split too; accents dropped.

    A name written to slip past the rules reads as it looks: invisible characters (zero-width, soft
    hyphen) are dropped and letters of other scripts that look Latin (Cyrillic ``а``, Greek ``ο``) read
    as the Latin ones, so ``pass\u200bword`` and ``p\u0430ssword`` are ``password``. Remembered for
    names of ordinary length: every key of every object asks, and keys repeat.
    """
    return _name_words(name) if len(name) <= 128 else _split_name(name)


@functools.lru_cache(maxsize=16384)
def _name_words(name: str) -> tuple[str, ...]:
    return _split_name(name)


def _split_name(name: str) -> tuple[str, ...]:
    if not name.isascii():
        name = _DISGUISES.sub("", name)
        if any("a" <= c.lower() <= "z" for c in name):  # Latin mixed with lookalikes; a Cyrillic word stays one
            name = name.translate(_LOOKALIKES)
        if not name.isascii():
            name = "".join(_fold(c) for c in name)
    return tuple(word.lower() for word in _WORD_BOUNDARY.findall(name))


#: Characters that show as nothing: a name holding one reads as the name without it.
_DISGUISES: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufe00-\ufe0f]"
)
#: Cyrillic and Greek letters drawn like Latin ones.
_LOOKALIKES: Final = str.maketrans(
    "аеорсухіјѕԁԛԝВЕКМНОРСТХАІЈЅαεορτυχνκιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwBEKMHOPCTXAIJSaeoptuxvkiABEZHIKMNOPTYX",
)


#: Latin letters that carry no accent to drop but are written plainly in ASCII names.
_PLAIN: Final = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "ß": "ss", "æ": "ae", "đ": "d", "ı": "i"})


@functools.lru_cache(maxsize=4096)
def _fold(c: str) -> str:
    """A Latin letter without its accent (``ñ`` -> ``n``); other scripts as they are (kana and hangul
    would come apart under NFKD)."""
    if c.isascii() or "LATIN" not in unicodedata.name(c, ""):
        return c
    c = c.translate(_PLAIN)
    return "".join(d for d in unicodedata.normalize("NFKD", c) if not unicodedata.combining(d))


def _foreign(words: tuple[str, ...]) -> bool:
    """A credential word of another language: a word, a run of the name's words, or a part of a caseless script's."""
    if any(word in FOREIGN_CREDENTIAL_WORDS for word in words):
        return True
    joined = "".join(words)
    if not joined.isascii():
        return any(part in joined for part in FOREIGN_CREDENTIAL_PARTS)
    return any(
        "".join(words[i:j]) in FOREIGN_CREDENTIAL_WORDS for i in range(len(words)) for j in range(i + 2, len(words) + 1)
    )


@functools.lru_cache(maxsize=8192)
def is_credential_name(name: str) -> bool:
    """Whether a field called ``name`` holds a credential (see the module docstring for the rules).

    Cached: every key of every object and every ``NAME=`` in its strings asks, and names repeat.
    """
    words = name_words(name)
    if not words:
        return False
    pairs = set(itertools.pairwise(words))
    if (words[-2:] if len(words) > 1 else ()) in CREDENTIAL_PHRASES:
        return True  # ends with the phrase itself: webhookUrl, secretAccessKey
    if words[-1] in REFERENCE_WORDS:
        return False
    if words[-1] in CREDENTIAL_LAST_WORDS or words == ("auth",):
        return True  # dbPass, smtp_pass, rootPw; auth alone (clientAuth is a mode)
    joined = "".join(words)
    if joined.endswith(CREDENTIAL_RUN_ENDINGS) and joined not in NOT_CREDENTIAL_RUNS and len(joined) <= 40:
        return True  # PassWord, DBPASS, rootpw, adminpwd
    singular = {(a, b[:-1] if b.endswith("s") else b) for a, b in pairs}  # apiKeys, accessKeys
    return (
        any(word in CREDENTIAL_WORDS or word.endswith(CREDENTIAL_SUFFIXES) for word in words)
        or bool((pairs | singular) & CREDENTIAL_PHRASES)
        or _foreign(words)
    )


def _states_a_fact(key: str, value: Any) -> bool:
    words = name_words(key)
    yes_no = isinstance(value, bool) or (isinstance(value, str) and _says_yes_or_no(value))
    return bool(words) and words[0] in PREDICATE_WORDS and yes_no


def is_suspicious_name(name: str) -> bool:
    return not SUSPICIOUS_WORDS.isdisjoint(name_words(name))


def looks_random(value: str) -> bool:
    """A long single token with high character entropy and mixed classes: a key, not a word."""
    if len(value) < ENTROPY_MIN_LENGTH or any(c.isspace() for c in value):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    if classes < 2:
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= ENTROPY_MIN_BITS


#: A run without spaces long enough to be judged by :func:`looks_machine_generated`.
_TOKEN: Final = re.compile(r"[^\s\"'<>(){}\[\],;|`\\]{16,}")
#: A structured value (URL, image, host, ARN, email, query, version) is judged part by part.
_STRUCTURED: Final = re.compile(r"[.:?&]|=(?!=*$)")
#: Content digests (images, blobs): they name content anyone may fetch, they open nothing.
_DIGEST: Final = re.compile(
    r"(?i)\b(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?|xxh(?:32|64|128)|crc32c?)[:-][0-9a-f]{8,}"
)
_BASE64ISH: Final = re.compile(r"[A-Za-z0-9+/=_-]+")
_HEX: Final = re.compile(r"[0-9a-fA-F]+")
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: A Kubernetes-style generated name (``web-7d4f8b9c6-x2k9p``): lowercase parts of at most 10 characters.
_KUBE_NAME: Final = re.compile(r"[a-z0-9]{1,10}(?:-[a-z0-9]{1,10})+")
#: ULIDs (Crockford base32, 26 characters): ids, kept under identifying names as UUIDs are.
_ULID: Final = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
#: AWS ARNs: they name a resource in an account; the account id and names are not secrets.
_ARN: Final = re.compile(
    r"arn:aws(?:-cn|-us-gov|-iso[a-z-]*)?:[a-z0-9-]{1,64}:[a-z0-9-]{0,32}:(?:\d{12})?:[\w+=,.@/:*-]{1,1024}"
)
#: The key a part stands under inside one run (``app=x,controller-uid=<uuid>``).
_KEY_IN_RUN: Final = re.compile(r"([A-Za-z_][\w./-]{0,63})[=:]\Z")
#: The key a value stands under in a string (``uid: x``, ``checksum/config=x``), read just before it.
_KEY_BEFORE: Final = re.compile(r"([A-Za-z_][\w./-]{0,63})[\"']?[ \t]*[:=][ \t]*[\"']?\Z")
_WORDY_RUN: Final = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}")


@functools.lru_cache(maxsize=8192)
def is_identifying_name(name: str) -> bool:
    """Whether a field called ``name`` holds an identifier (``uid``, ``checksum/config``, ``targetRevision``)."""
    return not is_credential_name(name) and any(word in IDENTIFYING_WORDS for word in name_words(name))


def looks_machine_generated(value: str) -> bool:
    """A run of 16+ characters that reads like a key rather than like anything a person named.

    Verdicts on short runs are cached (they repeat across objects); a long one is judged each time,
    so the cache's memory stays bounded by :data:`CACHED_LENGTH` per entry.

    Base64/hex alphabet (or a password's symbols), high entropy, character classes changing about
    as often as in random text, and few word-like runs (a path ``projects/my-project-123/secrets`` or a
    name ``ValidatingWebhookConfiguration`` is made of words; ``wJalrXUtnFEMI/K7MDENG`` is not).
    """
    return _looks_generated_cached(value) if len(value) <= CACHED_LENGTH else _looks_generated(value)


#: Strings up to this long have their verdicts cached (16,384 of each kind: a few MiB at most).
CACHED_LENGTH: Final = 256


@functools.lru_cache(maxsize=16384)
def _looks_generated_cached(value: str) -> bool:
    return _looks_generated(value)


def _looks_generated(value: str) -> bool:
    length = len(value)
    if length < ENTROPY_MIN_LENGTH:
        return False
    if _HEX.fullmatch(value):
        return length >= 24 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if _KUBE_NAME.fullmatch(value) and not _UUID.fullmatch(value):
        return False
    if not any(c.isdigit() for c in value) and (value.islower() or value.isupper()):
        return False
    wordy = sum(len(run) for run in _WORDY_RUN.findall(value)) / length
    if wordy >= 0.5:
        return False
    counts = Counter(value)
    entropy = -sum(n / length * math.log2(n / length) for n in counts.values())
    if entropy < ENTROPY_MIN_BITS:
        return False
    if _BASE64ISH.fullmatch(value):
        # class changes among letters and digits only: ``-``, ``+`` and ``/`` are how people join words
        alnum = _NOT_ALNUM.sub("", value)
        if len(alnum) < ENTROPY_MIN_LENGTH - 2:
            return False
        changes = (len(_RUN.findall(alnum.translate(_CLASSES))) - 1) / (len(alnum) - 1)
        return changes >= 0.3
    changes = (len(_RUN.findall(value.translate(_CLASSES))) - 1) / (length - 1)
    return changes >= 0.45 and wordy < 0.3  # a password's symbols: a stricter bar


#: Each character as its class (lowercase, uppercase, digit; anything else stays itself and counts as
#: "other"), so how often the class changes is a count of runs, done in C.
_CLASSES: Final = str.maketrans(
    {**dict.fromkeys(map(ord, string.ascii_lowercase), "l"), **dict.fromkeys(map(ord, string.ascii_uppercase), "u"),
     **dict.fromkeys(map(ord, string.digits), "d")}
)  # fmt: skip
_RUN: Final = re.compile(r"l+|u+|d+|[^lud]+")
_NOT_ALNUM: Final = re.compile(r"[^A-Za-z0-9]+")


def _deny_generated(value: str, *, key: str | None) -> str:
    """Every generated-looking run in ``value`` replaced, but what identifies (digests; ids under ``key``)."""
    if len(value) < ENTROPY_MIN_LENGTH:
        return value
    identifying = key is not None and is_identifying_name(key)
    if len(value) <= CACHED_LENGTH:
        return _deny_generated_cached(value, identifying)
    return _deny_generated_in(value, identifying)


@functools.lru_cache(maxsize=16384)
def _deny_generated_cached(value: str, identifying: bool) -> str:
    """Cached for short values: the same image references and arguments come back in object after object."""
    return _deny_generated_in(value, identifying)


def _deny_generated_in(value: str, identifying: bool) -> str:
    """The generated-looking runs of ``value`` replaced; ``identifying``: it stands under an identifying name."""

    def near_identifying(match: re.Match[str]) -> bool:
        if identifying:
            return True
        before = _KEY_BEFORE.search(value, max(0, match.start() - 80), match.start())
        return before is not None and is_identifying_name(before.group(1))

    def judge(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == REDACTED or _DIGEST.fullmatch(token) or _ARN.fullmatch(token):
            return token  # digests and ARNs name things; they open nothing
        if _STRUCTURED.search(token) is not None:
            return _judge_parts(token, identifying=near_identifying(match))
        if looks_machine_generated(token):
            is_id = _UUID.fullmatch(token) or _HEX.fullmatch(token) or _ULID.fullmatch(token)
            return token if is_id and near_identifying(match) else REDACTED
        return token

    return _TOKEN.sub(judge, value)


def _judge_parts(token: str, *, identifying: bool) -> str:
    """A structured run (URL, image, ARN, query) judged part by part: only generated parts go.

    A part right after ``KEY=`` or ``KEY:`` inside the run stands under that key (a label written as
    ``controller-uid=<uuid>``, a query's ``revision=<sha>``)."""
    masked = _DIGEST.sub(lambda m: "\0" * len(m.group(0)), token)
    out, at = [], 0
    for part in re.finditer(r"[^:@?&#.,=\0]+", masked):
        text = token[part.start() : part.end()]
        keyed = identifying
        if not keyed and part.start() > 0 and token[part.start() - 1] in "=:":
            before = _KEY_IN_RUN.search(token, max(0, part.start() - 80), part.start())
            keyed = before is not None and is_identifying_name(before.group(1))
        is_id = keyed and (_UUID.fullmatch(text) or _HEX.fullmatch(text) or _ULID.fullmatch(text))
        if len(text) >= ENTROPY_MIN_LENGTH and not is_id and looks_machine_generated(text):
            out.append(token[at : part.start()])
            out.append(REDACTED)
            at = part.end()
    out.append(token[at:])
    return "".join(out)


def redact_text(value: str, *, raw: bool = True, key: str | None = None) -> str:
    """``value`` with every credential-shaped part replaced by ``<redacted>``.

    ``raw=False`` is for rendered document text, where ``field: words`` is our own layout and the
    ``password: x`` / ``Authorization: x`` rules would eat descriptions (values under such field
    names were already dropped by name before rendering). ``key`` is the field the value stands
    under, when known: a UUID or hex id under an identifying name is kept.
    """
    if len(value) < 8:
        return value
    if len(value) <= _MEMO_MAX_CHARS:
        return _redact_short(value, raw, key)
    return _redact_text(value, raw=raw, key=key)


#: Values up to this long are judged once per process and remembered (the same image, label or
#: flag recurs in every replica of a workload: 100,000 objects hold far fewer distinct short strings).
_MEMO_MAX_CHARS: Final = 256


@functools.lru_cache(maxsize=32768)
def _redact_short(value: str, raw: bool, key: str | None) -> str:
    return _redact_text(value, raw=raw, key=key)


def _redact_text(value: str, *, raw: bool, key: str | None) -> str:
    value = cut_string(value)
    if not value.isascii():
        value = _DISGUISES.sub("", value)  # pass\u200bword: x reads as password: x
    if raw and (value.lstrip()[:1] in ("{", "[") or "\n" in value):
        structured = _redact_structured(value)
        if structured is not None:
            value = structured
    value = _judge_percent(_apply_rules(value, (*_VALUE_RULES, *_RAW_VALUE_RULES) if raw else _VALUE_RULES))
    if "=" in value:
        value = _redact_equals_pairs(value)
    if raw and ":" in value:
        if "\n" in value:
            value = _redact_blocks(value)
        value = _COLON_PAIR.sub(_colon_pair, value)
    return _deny_generated(value, key=key)


def _apply_rules(value: str, rules: tuple[tuple[re.Pattern[str], Replacement], ...]) -> str:
    """Each rule in order, skipping those whose needles the value does not hold: the needles present are
    found once (a substring test each, exact), not once per rule."""
    lowered = value.lower()
    present = {needle for needle in _ALL_NEEDLES if needle in lowered}
    for pattern, replacement in rules:
        needles = _NEEDLES_OF.get(id(pattern))
        if needles is not None and present.isdisjoint(needles):
            continue
        value = pattern.sub(replacement, value)
    return value


def is_credential_value(value: str) -> bool:
    return redact_text(value) != value


@dataclasses.dataclass(frozen=True, kw_only=True)
class Redacted:
    """An object with every secret-bearing part removed, and the key names its data held.

    The values of a Secret's or ConfigMap's ``data``/``stringData``/``binaryData`` are gone from
    ``obj``; their key names survive in ``data_keys`` because they say what the object holds.
    """

    obj: Body
    data_keys: tuple[str, ...] = ()


def redact_object(obj: Body) -> Redacted:
    """A copy of ``obj`` with every secret-bearing part removed (key names of Secret/ConfigMap kept)."""
    kind = str(obj.get("kind", ""))
    out: dict[str, Any] = {}
    keys: set[str] = set()
    budget = Budget()
    for key, value in obj.items():
        if key == "metadata" and isinstance(value, Mapping):
            out[key] = _redact_metadata(value)
        elif kind in ("Secret", "ConfigMap") and key in ("data", "stringData", "binaryData"):
            if isinstance(value, Mapping):
                keys.update(str(k) for k in value)
        else:
            out[key] = scrub(value, budget=budget)
    return Redacted(obj=cast(Body, out), data_keys=tuple(sorted(keys)))


def _redact_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in metadata.items() if k != "managedFields"}
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        out["annotations"] = {
            str(k): (
                REDACTED if looks_chosen_password(v) and not says_what_it_is(str(k)) else redact_text(v, key=str(k))
            )
            if isinstance(v, str)
            else v
            for k, v in annotations.items()
            if k not in DROPPED_ANNOTATIONS and not is_credential_name(str(k).rsplit("/", 1)[-1])
        }
    labels = metadata.get("labels")
    if isinstance(labels, Mapping):
        out["labels"] = {
            str(k): REDACTED
            if (is_credential_name(str(k).rsplit("/", 1)[-1]) and not _says_yes_or_no(str(v)))
            or (looks_chosen_password(str(v)) and not says_what_it_is(str(k)))
            else redact_text(str(v), key=str(k))
            for k, v in labels.items()
        }
    return out


#: In a map, the field that names a pair (``{name: DB_PASSWORD, value: x}``) ...
PAIR_NAME_FIELDS: Final = ("name", "key", "parameter", "param", "variable", "var", "field", "option", "setting")
#: ... and the fields that hold its value.
PAIR_VALUE_FIELDS: Final = frozenset({"value", "val", "default", "defaultValue", "data", "content", "stringValue"})
_PEM_BEGIN: Final = re.compile(r"-----BEGIN [A-Z0-9 ]+-----")
_PEM_END: Final = re.compile(r"-----END [A-Z0-9 ]+-----")


def scrub(
    value: Any, *, under_credential: bool = False, key: str | None = None, budget: Budget | None = None, depth: int = 0
) -> Any:
    """Recursively drop credentials from any JSON-like value (see the module docstring).

    Bounded (``inference/bounds.py``): a value nested past :data:`MAX_DEPTH` reads as ``<cut>``,
    and ``budget`` raises :class:`TooComplex` past its nodes or time.
    """
    budget = budget if budget is not None else Budget()
    budget.spend()
    if depth >= MAX_DEPTH and isinstance(value, Mapping | list):
        return CUT
    kind = type(value)  # plain types first: isinstance against Mapping goes through the ABC machinery
    if kind is dict or (kind is not str and kind is not list and isinstance(value, Mapping)):
        out = {
            str(k): _scrub_field(str(k), v, under_credential=under_credential, budget=budget, depth=depth + 1)
            for k, v in value.items()
        }
        named = next((value[f] for f in PAIR_NAME_FIELDS if isinstance(value.get(f), str)), None)
        if named is not None and is_credential_name(named):
            for field in PAIR_VALUE_FIELDS & out.keys():
                if not _says_yes_or_no(str(value[field])):
                    out[field] = REDACTED  # {name: DB_PASSWORD, value: x} wherever it appears
        return out
    if isinstance(value, list):
        items = [
            scrub(item, under_credential=under_credential, key=key, budget=budget, depth=depth + 1) for item in value
        ]
        hiding = False
        for index, item in enumerate(value):
            if isinstance(item, str) and (hiding or _PEM_BEGIN.search(item)):
                hiding = not _PEM_END.search(item)
                items[index] = REDACTED  # a key block split across items: every line to its END
            if index + 1 < len(value):
                following = value[index + 1]
                if (
                    isinstance(item, str)
                    and isinstance(following, str)
                    and not following.startswith("-")
                    and _FLAG.fullmatch(item)
                    and is_credential_name(item)
                ):
                    items[index + 1] = REDACTED  # ["--password", "x"]: a command line's credential
        _judge_as_command_line(value, items)
        return items
    if under_credential:
        return REDACTED
    if isinstance(value, str):
        if key is not None and looks_chosen_password(value) and not says_what_it_is(key):
            return REDACTED  # a list item of a field whose name says nothing (["Sommer2024"])
        return redact_text(value, key=key)
    return value


#: A list judged as one command line too: only short lists of strings (an ``args`` list, not 1,000 hostnames).
MAX_COMMAND_ITEMS: Final = 64
MAX_COMMAND_CHARS: Final = 4096


def _judge_as_command_line(value: list[Any], items: list[Any]) -> None:
    """Items a rule catches only next to each other (``["curl", "-u", "admin:pw"]``, ``["mysql", "-p", "pw"]``)
    are judged as the command line they make: an item the joined line loses is redacted in place."""
    if not 1 < len(value) <= MAX_COMMAND_ITEMS or not all(isinstance(item, str) for item in value):
        return
    line = " ".join(value)
    if len(line) > MAX_COMMAND_CHARS:
        return
    judged = redact_text(line)
    if judged == line:
        return
    for index, item in enumerate(value):
        if item.strip() and item not in judged and items[index] != REDACTED:
            items[index] = REDACTED


#: A value stands as itself, not as a secret, under a name whose last word says what kind of thing it is
#: (``osImage: Ubuntu2204``, ``runtime: NodeJS18``, ``sku: Standard2v3``) or that it identifies.
DESCRIPTIVE_WORDS: Final = frozenset(
    {"type", "types", "kind", "class", "size", "sku", "tier", "version", "versions", "family", "os", "image",
     "images", "runtime", "platform", "arch", "architecture", "flavor", "flavour", "edition", "distro",
     "distribution", "release", "mode", "name", "names", "region", "zone", "location", "model", "generation",
     "gen", "engine", "plan", "profile", "channel", "product", "format", "protocol", "level", "policy",
     "strategy", "provider", "instance", "machine", "series", "stage", "environment", "env", "cluster", "app",
     "component", "tag", "tags", "title", "label", "labels", "template", "category", "variant",
     "preset", "theme", "locale", "language", "codec", "algorithm", "cipher", "suite", "method", "role",
     "group", "team", "owner", "project", "account", "subscription", "tenant", "host", "hostname", "domain",
     "endpoint", "url", "uri", "path", "file", "dir", "ref", "revision", "branch", "commit", "build"}
)  # fmt: skip
_CHOSEN: Final = re.compile(r"[^\s/:.@_,;=<>()\[\]{}\"'`|\\]{6,64}")


def says_what_it_is(key: str) -> bool:
    """Whether a field called ``key`` names the kind of thing its value is (or identifies it)."""
    words = name_words(key.rsplit("/", 1)[-1])
    return bool(words) and (words[-1] in DESCRIPTIVE_WORDS or words[-1] in IDENTIFYING_WORDS)


def looks_chosen_password(value: str) -> bool:
    """One token as people choose passwords: lower and upper case and digits (``Sommer2024``,
    ``Qz7mapleRiver``), or a symbol among letters and digits (``hunter2!``), and no separator that
    would make it a path, host, version, image or identifier. Under a name that does not say what the
    value is, such a token is dropped: its place and grammar do not say it is safe."""
    return 6 <= len(value) <= 64 and _looks_chosen(value)


@functools.lru_cache(maxsize=16384)
def _looks_chosen(value: str) -> bool:
    if not _CHOSEN.fullmatch(value) or _says_yes_or_no(value) or value.startswith(REDACTED):
        return False
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() and c != "-" for c in value)
    letters = lower or upper
    if symbol and letters and digit:
        return True
    if not (lower and upper and digit):
        return False
    # CamelCase words with a trailing version or count (EnableHTTP2, Gen2) say what they are; a word and a
    # year or digits in the middle (Sommer2024, Qz7maple) is how a password is made
    return re.fullmatch(r"(?:[A-Z][a-z]+|[A-Z]+(?![a-z]))+\d{1,2}", value) is None


def _made_of_words(value: str) -> bool:
    """``RequireAndVerifyClientCert`` under ``clientAuth``: an enum spelled in words, not a key."""
    return sum(len(run) for run in _WORDY_RUN.findall(value)) >= 0.8 * len(value)


def _names_a_thing(value: str) -> bool:
    """An ARN, a content digest or a Kubernetes qualified name under a ``*Key*``/``*Hash*`` name: it names
    a resource, a taint or a label (a toleration's or a selector's ``key: node.kubernetes.io/not-ready``),
    it opens nothing."""
    return _ARN.fullmatch(value) is not None or _DIGEST.fullmatch(value) is not None or _qualified_name(value)


#: ``prefix/name`` as Kubernetes spells label, annotation, taint and extended-resource keys.
_QUALIFIED: Final = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}/([a-z0-9]+(?:[-._][a-z0-9]+)*)")


def _qualified_name(value: str) -> bool:
    """A DNS-prefixed name whose segments read as words or short tokens (``not-ready``, ``managed-by``,
    ``gpu``, ``v1``), not one long run of letters and digits, which is how a key made to look like one would read."""
    match = _QUALIFIED.fullmatch(value)
    if match is None:
        return False
    return all(part.isalpha() or len(part) <= 4 for part in re.split(r"[-._]", match.group(1)))


def _scrub_field(key: str, value: Any, *, under_credential: bool, budget: Budget, depth: int) -> Any:
    if is_credential_name(key):
        if _states_a_fact(key, value):
            return value  # hasSecret: true, enableBasicAuth: false
        if isinstance(value, Mapping):
            # reference fields inside (name, key) survive
            return scrub(value, under_credential=True, budget=budget, depth=depth)
        return REDACTED
    if under_credential:
        if isinstance(value, Mapping):
            return scrub(value, under_credential=True, budget=budget, depth=depth)
        words = name_words(key)
        return scrub(value, key=key, budget=budget, depth=depth) if words and words[-1] in REFERENCE_WORDS else REDACTED
    if (
        isinstance(value, str)
        and is_suspicious_name(key)
        and looks_random(value)
        and not _names_a_thing(value)
        and not _made_of_words(value)
    ):
        return REDACTED
    if isinstance(value, str) and looks_chosen_password(value) and not says_what_it_is(key):
        return REDACTED
    return scrub(value, key=key, budget=budget, depth=depth)
