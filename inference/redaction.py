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
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias, cast

import yaml

from inference.bodies import Body

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
    }
)
#: A field name whose *last* word is one of these short forms holds a credential (``dbPass``, ``rootPw``);
#: elsewhere in a name they mean something else (``passThrough``).
CREDENTIAL_LAST_WORDS: Final = frozenset({"pass", "pw", "pword", "pin", "otp", "totp", "hotp"})
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

_WORD_BOUNDARY = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

#: Pair names that are not credential names in a schema but are in a query or connection string.
_PAIR_NAMES: Final = re.compile(r"(?i)(?:sig|signature|x-amz-signature|accountkey|sharedaccesskey)")
#: ``NAME=value`` anywhere (env files, flags, query and connection strings); the name is judged by
#: :func:`_holds_credential`. ``"NAME": value`` and ``NAME: value`` are :data:`_COLON_PAIR` (raw strings only):
#: a quoted name (JSON) may have no space after its colon, a bare one (YAML, headers) must, so an
#: image reference (``acme/token-service:1.4.2``) is not a pair; neither side crosses a line.
_PAIR_VALUE: Final = r"(\"[^\"]*\"|'[^']*'|[^\s&;,\"'|}]+)"
_EQUALS_PAIR: Final = re.compile(rf"(?<![\w.])([A-Za-z_][\w.-]*)([ \t]*=[ \t]*){_PAIR_VALUE}")
_COLON_PAIR: Final = re.compile(
    rf"(?<![\w./@:-])(?:([\"'])([A-Za-z_][\w.-]*)\1([ \t]*:[ \t]*)|()([A-Za-z_][\w.-]*)([ \t]*:[ \t]+)){_PAIR_VALUE}"
)
#: A YAML block scalar under a credential key: ``password: |`` and the more-indented lines after it.
_BLOCK_SCALAR: Final = re.compile(r"(?m)^([ \t]*)([\"']?)([A-Za-z_][\w.-]*)\2[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*$")
#: A command-line flag on its own (its value is the next item of the list).
_FLAG: Final = re.compile(r"--?[A-Za-z][\w.-]*")


def _equals_pair(match: re.Match[str]) -> str:
    name, separator, value = match.groups()
    if not _holds_credential(name) or _says_yes_or_no(value):
        return match.group(0)
    return f"{name}{separator}{REDACTED}"


def _colon_pair(match: re.Match[str]) -> str:
    quoted, quoted_name, quoted_separator, _, bare_name, bare_separator, value = match.groups()
    quote, name, separator = (quoted, quoted_name, quoted_separator) if quoted else ("", bare_name, bare_separator)
    if not _holds_credential(name) or _says_yes_or_no(value) or value in ("{", "[", "|", ">"):
        return match.group(0)
    return f"{quote}{name}{quote}{separator}{REDACTED}"


def _userinfo(match: re.Match[str]) -> str:
    scheme, userinfo = match.groups()
    if ":" not in userinfo and re.fullmatch(r"[a-z][a-z0-9._-]{0,31}", userinfo) and not looks_random(userinfo):
        return match.group(0)  # ssh://git@github.com: a user name, no password
    return f"{scheme}{REDACTED}@"


def _flag_value(match: re.Match[str]) -> str:
    """``--password SECRET`` inside a string (a shell line): the value after a credential flag."""
    lead, flag, value = match.groups()
    if not is_credential_name(flag) or _says_yes_or_no(value) or value.startswith(REDACTED):
        return match.group(0)
    return f"{lead}{REDACTED}"


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
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict | list):
            cleaned = scrub(data)
            return json.dumps(cleaned, ensure_ascii=False) if cleaned != data else None
    if "\n" in stripped and ":" in stripped and len(stripped) <= MAX_STRUCTURED:
        try:
            data = yaml.safe_load(stripped)
        except yaml.YAMLError:
            return None
        if isinstance(data, dict):
            cleaned = scrub(data)
            if cleaned != data:
                return yaml.safe_dump(cleaned, sort_keys=False, allow_unicode=True, default_flow_style=False).strip()
    return None


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
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/?#@]+)@"), _userinfo),
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
            r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b[^|;&\n]*?\s-p)(?!\s)([^\s\"'|;&]+)"
        ),
        rf"\1{REDACTED}",
    ),
    (re.compile(r"((?<!\S)(?:-u|--user|--proxy-user|-U)[\s=]+[^\s:\"']+:)([^\s\"']+)"), rf"\1{REDACTED}"),
    (re.compile(r"((?<![^\s\"'])(--?[A-Za-z][\w.-]*)\s+)(?!-)([^\s\"']+)"), _flag_value),
)
#: Extra rules for strings taken from objects, which may hold YAML or headers (``Authorization: Basic x``;
#: ``password: x`` is :data:`_COLON_PAIR`). Not applied to rendered document text, whose own layout is
#: ``field: words``.
_RAW_VALUE_RULES: Final[tuple[tuple[re.Pattern[str], Replacement], ...]] = (
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*)(?:[A-Za-z]+\s+)?[^\s,;\"']+"), rf"\1{REDACTED}"),
)


def name_words(name: str) -> tuple[str, ...]:
    """``secretAccessKey`` -> (secret, access, key); snake, kebab, dots and digits split too."""
    return tuple(word.lower() for word in _WORD_BOUNDARY.findall(name))


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
    if words[-1] in CREDENTIAL_LAST_WORDS:
        return True  # dbPass, smtp_pass, rootPw
    return any(word in CREDENTIAL_WORDS or word.endswith(CREDENTIAL_SUFFIXES) for word in words) or bool(
        pairs & CREDENTIAL_PHRASES
    )


def _states_a_fact(key: str, value: Any) -> bool:
    words = name_words(key)
    yes_no = isinstance(value, bool) or (isinstance(value, str) and _says_yes_or_no(value))
    return bool(words) and words[0] in PREDICATE_WORDS and yes_no


def is_suspicious_name(name: str) -> bool:
    return any(word in SUSPICIOUS_WORDS for word in name_words(name))


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


def redact_text(value: str, *, raw: bool = True) -> str:
    """``value`` with every credential-shaped part replaced by ``<redacted>``.

    ``raw=False`` is for rendered document text, where ``field: words`` is our own layout and the
    ``password: x`` / ``Authorization: x`` rules would eat descriptions (values under such field
    names were already dropped by name before rendering).
    """
    if len(value) < 8:
        return value
    if raw and (value.lstrip()[:1] in ("{", "[") or "\n" in value):
        structured = _redact_structured(value)
        if structured is not None:
            value = structured
    for pattern, replacement in (*_VALUE_RULES, *_RAW_VALUE_RULES) if raw else _VALUE_RULES:
        value = pattern.sub(replacement, value)
    if "=" in value:
        value = _EQUALS_PAIR.sub(_equals_pair, value)
    if raw and ":" in value:
        if "\n" in value:
            value = _redact_blocks(value)
        value = _COLON_PAIR.sub(_colon_pair, value)
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
    for key, value in obj.items():
        if key == "metadata" and isinstance(value, Mapping):
            out[key] = _redact_metadata(value)
        elif kind in ("Secret", "ConfigMap") and key in ("data", "stringData", "binaryData"):
            if isinstance(value, Mapping):
                keys.update(str(k) for k in value)
        else:
            out[key] = scrub(value)
    return Redacted(obj=cast(Body, out), data_keys=tuple(sorted(keys)))


def _redact_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in metadata.items() if k != "managedFields"}
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        out["annotations"] = {
            str(k): redact_text(v) if isinstance(v, str) else v
            for k, v in annotations.items()
            if k not in DROPPED_ANNOTATIONS and not is_credential_name(str(k).rsplit("/", 1)[-1])
        }
    labels = metadata.get("labels")
    if isinstance(labels, Mapping):
        out["labels"] = {
            str(k): REDACTED
            if is_credential_name(str(k).rsplit("/", 1)[-1]) and not _says_yes_or_no(str(v))
            else redact_text(str(v))
            for k, v in labels.items()
        }
    return out


def scrub(value: Any, *, under_credential: bool = False) -> Any:
    """Recursively drop credentials from any JSON-like value (see the module docstring)."""
    if isinstance(value, Mapping):
        return {str(k): _scrub_field(str(k), v, under_credential=under_credential) for k, v in value.items()}
    if isinstance(value, list):
        items = [scrub(item, under_credential=under_credential) for item in value]
        for index, item in enumerate(value[:-1]):
            following = value[index + 1]
            if (
                isinstance(item, str)
                and isinstance(following, str)
                and not following.startswith("-")
                and _FLAG.fullmatch(item)
                and is_credential_name(item)
            ):
                items[index + 1] = REDACTED  # ["--password", "x"]: a command line's credential
        return items
    if under_credential:
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    return value


def _scrub_field(key: str, value: Any, *, under_credential: bool) -> Any:
    if is_credential_name(key):
        if _states_a_fact(key, value):
            return value  # hasSecret: true, enableBasicAuth: false
        if isinstance(value, Mapping):
            return scrub(value, under_credential=True)  # reference fields inside (name, key) survive
        return REDACTED
    if under_credential:
        if isinstance(value, Mapping):
            return scrub(value, under_credential=True)
        words = name_words(key)
        return scrub(value) if words and words[-1] in REFERENCE_WORDS else REDACTED
    if isinstance(value, str) and is_suspicious_name(key) and looks_random(value):
        return REDACTED
    return scrub(value)
