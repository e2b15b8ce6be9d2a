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
from cryptography.x509.oid import NameOID

from kubevec.inference.redaction.names import is_credential_name
from kubevec.inference.redaction.prose import plain_word

_CERTIFICATE: Final = re.compile(
    r"-----BEGIN (?:TRUSTED )?CERTIFICATE-----[A-Za-z0-9+/=\s]{0,20000}?-----END (?:TRUSTED )?CERTIFICATE-----"
)
_ONLY_CERTIFICATES: Final = re.compile(rf"\s*(?:{_CERTIFICATE.pattern}\s*)+")
#: ``-----BEGIN`` in base64 (``LS0tLS1CRUdJTi``), as a ``caBundle`` holds it.
_ENCODED_PEM: Final = "LS0tLS1CRUdJTi"
#: Longest value read as a bundle (a system trust store is about 200 KB).
MAX_BUNDLE_CHARS: Final = 1_000_000


def summarise_certificates(value: str) -> str | None:
    """The summary of ``value`` when it is certificates only (PEM or base64 of PEM), else None."""
    if "CERTIFICATE-----" not in value and not value.lstrip().startswith(_ENCODED_PEM):
        return None
    if len(value) > MAX_BUNDLE_CHARS:
        return None
    text = value
    if value.lstrip().startswith(_ENCODED_PEM):
        try:
            text = base64.b64decode("".join(value.split()), validate=True).decode("ascii")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
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
