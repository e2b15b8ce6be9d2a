"""What is public by nature and kept, however random it looks: certificates and base64 of plain words.

- **Certificates** (issue 52, item 5): a value made only of ``-----BEGIN CERTIFICATE-----`` blocks (a CA
  bundle, a ``caBundle`` or ``ca.crt``), as PEM or as the base64 of PEM that Kubernetes API fields hold,
  is public: anyone who connects to the server is shown it. It is kept as a summary,
  ``<certificate: CN=webhook.shop.svc, until 2027-01-31>`` (``<3 certificates: CN=a and 2 more, until ...>``
  for a bundle: the first subject and the earliest expiry, short enough for a field's width): the
  subject and expiry are what an agent searches for, the base64 body means nothing to an embedding and
  is longer than any field a document shows (cut, a block reads as a key). The summary holds only what
  the certificate's parser read, never the block's text: a block that does not parse reads
  ``<certificate: unreadable>``. A value that also holds a key block (``PRIVATE KEY``, any other
  ``BEGIN``) is no certificate: it is judged by the rules, which drop every block.
- **Public keys** (``-----BEGIN PUBLIC KEY-----``, ``RSA PUBLIC KEY``, as PEM or base64 of PEM): public as a
  certificate is (a verifier's key, a JWKS entry), and kept the same way, as what the parser reads:
  ``<public key: RSA 2048 bits>``, ``<public key: EC secp384r1>``, ``<2 public keys: Ed25519 and 1 more>``;
  never the block's text (cut to a field's width, a block reads as a key and goes), ``<public key:
  unreadable>`` when it does not parse, and judged by the rules when a private key stands beside it.
- **Ids a message names and issuer URLs** (:func:`set_aside_named`): a UUID right after a word that says
  what it identifies (``request``, ``job``, ``trace id:``, ``volume``; :func:`~.names.says_what_it_is` and
  :data:`NAMED_BY_ID`) is an id, and an OIDC issuer's URL (under a field or flag called ``issuer``,
  ``oidcIssuerURL``, ``--oidc-issuer-url``) is published by its provider for every token's ``iss``: both
  are set aside before the rules run. A UUID after any other word (``key``, ``is``, ``with``) is judged as
  before, and an issuer URL keeps to scheme, host and path: its userinfo and query are judged.
- **Base64 of plain words** (``dGVhbS1wYXltZW50cw==``: ``team-payments``): decoded, and kept as it is
  only when the decoded text is plain words and numbers (:func:`plain_words`) and the gate keeps it
  whole (the caller judges it): base64 of ``password=hunter2``, of a JWT or of a token stays dropped.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from cryptography.x509.oid import NameOID

from kubevec.inference.redaction.generated import set_aside
from kubevec.inference.redaction.names import is_credential_name, name_words, says_what_it_is
from kubevec.inference.redaction.prose import plain_word

_CERTIFICATE: Final = re.compile(
    r"-----BEGIN (?:TRUSTED )?CERTIFICATE-----[A-Za-z0-9+/=\s]{0,20000}?-----END (?:TRUSTED )?CERTIFICATE-----"
)
_ONLY_CERTIFICATES: Final = re.compile(rf"\s*(?:{_CERTIFICATE.pattern}\s*)+")
_PUBLIC_KEY: Final = re.compile(
    r"-----BEGIN (RSA )?PUBLIC KEY-----[A-Za-z0-9+/=\s]{0,20000}?-----END (?:RSA )?PUBLIC KEY-----"
)
_ONLY_PUBLIC_KEYS: Final = re.compile(rf"\s*(?:{_PUBLIC_KEY.pattern}\s*)+")
#: ``-----BEGIN`` in base64 (``LS0tLS1CRUdJTi``), as a ``caBundle`` holds it.
_ENCODED_PEM: Final = "LS0tLS1CRUdJTi"
#: Longest value read as a bundle (a system trust store is about 200 KB).
MAX_BUNDLE_CHARS: Final = 1_000_000


def summarise_certificates(value: str) -> str | None:
    """The summary of ``value`` when it is certificates only, or public keys only (PEM or base64 of PEM), else None."""
    if (
        "CERTIFICATE-----" not in value
        and "PUBLIC KEY-----" not in value
        and not value.lstrip().startswith(_ENCODED_PEM)
    ):
        return None
    if len(value) > MAX_BUNDLE_CHARS:
        return None
    text = value
    if value.lstrip().startswith(_ENCODED_PEM):
        try:
            text = base64.b64decode("".join(value.split()), validate=True).decode("ascii")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
    if _ONLY_PUBLIC_KEYS.fullmatch(text) is not None:
        return _key_summary(text.strip())
    if _ONLY_CERTIFICATES.fullmatch(text) is None:
        return None
    return _summary(text.strip())


@functools.lru_cache(maxsize=1024)
def _summary(pem: str) -> str:
    blocks = _CERTIFICATE.findall(pem)
    try:
        parsed = x509.load_pem_x509_certificates(pem.encode("ascii"))
    except ValueError:
        parsed = []
    if len(parsed) != len(blocks):
        return "<certificate: unreadable>" if len(blocks) == 1 else f"<{len(blocks)} certificates: unreadable>"
    more = f" and {len(parsed) - 1} more" if len(parsed) > 1 else ""
    until = min(certificate.not_valid_after_utc for certificate in parsed).date().isoformat()
    head = "certificate" if len(parsed) == 1 else f"{len(parsed)} certificates"
    return f"<{head}: {_subject(parsed[0])}{more}, until {until}>"


@functools.lru_cache(maxsize=1024)
def _key_summary(pem: str) -> str:
    """What each public key block is, as its parser reads it (never the block's text)."""
    kinds: list[str] = []
    for block in _PUBLIC_KEY.finditer(pem):
        try:
            kinds.append(_key_kind(load_pem_public_key(block.group(0).encode("ascii"))))
        except (ValueError, TypeError):
            kinds.append("unreadable")
    head = "public key" if len(kinds) == 1 else f"{len(kinds)} public keys"
    more = f" and {len(kinds) - 1} more" if len(kinds) > 1 else ""
    return f"<{head}: {kinds[0]}{more}>"


def _key_kind(key: object) -> str:
    if isinstance(key, rsa.RSAPublicKey):
        return f"RSA {key.key_size} bits"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"EC {key.curve.name}"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "Ed25519"
    if isinstance(key, ed448.Ed448PublicKey):
        return "Ed448"
    return type(key).__name__.removesuffix("PublicKey").lstrip("_") or "key"


def _subject(certificate: x509.Certificate) -> str:
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    subject = f"CN={names[0].value!s}" if names else certificate.subject.rfc4514_string() or "no subject"
    return subject[:120]


#: A base64 run (standard or URL-safe alphabet) as long as a few words.
ENCODED: Final = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{8,4096}={0,2}(?![\w+/=-])")
_SEPARATORS: Final = re.compile(r"[\s\-_./:@,;+&()]+")


@functools.lru_cache(maxsize=4096)
def decoded_words(token: str) -> str | None:
    """What ``token`` decodes to when it is base64 of plain words and numbers, else None.

    Only a canonical encoding counts (the text re-encodes to the token), so a random token that happens
    to decode is not read as words."""
    urlsafe = "-" in token or "_" in token
    body = token.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded) if urlsafe else base64.b64decode(padded, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    again = (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode("ascii").rstrip("=")
    if again != body or not plain_words(text):
        return None
    return text


def plain_words(text: str) -> bool:
    """Words and short numbers only (``team-payments``, ``owner: data platform 2``), a word among them, and
    none that names a credential."""
    if not text.strip() or not all(c.isprintable() or c in "\n\t" for c in text):
        return False
    parts = [part for part in _SEPARATORS.split(text) if part]
    if not parts or not any(len(part) >= 3 and part.isalpha() for part in parts):
        return False
    if any(is_credential_name(part) for part in parts):
        return False  # "db password is ...": words, but about a credential
    return all(plain_word(part) or (part.isdigit() and len(part) <= 6) for part in parts)


#: Things a message names by a UUID beside :func:`~.names.says_what_it_is`'s words (``request``, ``trace``,
#: ``instance``, ``id``): the objects jobs, storage and queues report on.
NAMED_BY_ID: Final = frozenset(
    {"job", "task", "run", "operation", "execution", "workflow", "pipeline", "step", "volume", "disk", "snapshot",
     "backup", "order", "transaction", "event", "message", "object", "resource", "node", "pod", "container",
     "upload", "batch", "deployment", "release", "device", "user", "customer", "tenant", "subscription"}
)  # fmt: skip
#: A UUID standing alone, and the word before it (``request <uuid>``, ``Trace ID: <uuid>``, ``job=<uuid>``).
_UUID: Final = re.compile(
    r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])"
)
_WORD_BEFORE: Final = re.compile(r"(?<![\w-])([A-Za-z][A-Za-z_-]{1,31})[ \t]*[:=#]?[ \t]*\Z")
#: An issuer's URL after its name (``issuer: https://...``, ``--oidc-issuer-url=https://...``, ``"iss":"https://..."``):
#: scheme, host and path only (no userinfo, query or fragment: those are judged).
_ISSUER_URL: Final = re.compile(
    r"(?i)((?:issuer(?:[-_]?ur[il])?|(?<![\w-])iss)[\"']?[ \t]*[:=][ \t]*[\"']?|issuer[ \t]+(?:is[ \t]+)?)"
    r"(https://[A-Za-z0-9.-]{1,253}(?::\d{1,5})?(?=[/?#\s\"',;]|$)(?:/[\w.~%-]*)*)"
)
_URL_PATH: Final = re.compile(r"https://[A-Za-z0-9.-]{1,253}(?::\d{1,5})?(?=[/?#\s\"',;]|$)(?:/[\w.~%-]*)*")
_ISSUER_WORDS: Final = frozenset({"issuer", "issuers", "iss"})


def set_aside_named(value: str, parts: list[str], *, key: str | None) -> str:
    """``value`` with the UUIDs a word names and the issuer URLs set aside as public (``parts``, see the module
    docstring); ``key`` is the field it stands under: an issuer's own field keeps its URL's path whole."""
    if key is not None and _names_issuer(key):
        url = _URL_PATH.match(value)
        if url is not None:
            value = set_aside(url.group(0), parts) + value[url.end() :]
    if "https://" in value and ("ss" in value or "SS" in value):
        value = _ISSUER_URL.sub(lambda m: m.group(1) + set_aside(m.group(2), parts), value)
    if len(value) >= 36 and "-" in value:
        value = _UUID.sub(lambda m: _named_uuid(m, value, parts), value)
    return value


def _names_issuer(key: str) -> bool:
    """A field that holds an issuer's URL: ``issuer``, ``issuerURL``, ``oidcIssuerUrl``, ``serviceAccountIssuer``."""
    words = name_words(key.rsplit("/", 1)[-1])
    tail = words[-2:-1] if len(words) > 1 and words[-1] in ("url", "uri", "urls", "uris") else words[-1:]
    return bool(tail) and tail[0] in _ISSUER_WORDS


def _named_uuid(match: re.Match[str], value: str, parts: list[str]) -> str:
    before = _WORD_BEFORE.search(value, max(0, match.start() - 40), match.start())
    if before is None:
        return match.group(0)
    word = before.group(1)
    named = word.lower() in NAMED_BY_ID or (says_what_it_is(word) and not is_credential_name(word))
    return set_aside(match.group(0), parts) if named else match.group(0)
