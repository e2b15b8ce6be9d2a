"""Deny by default: runs of characters that read as machine-generated keys, and tokens chosen as passwords.

The rules by name and by value know the formats somebody listed; these catch the rest by shape.
A run of 16 or more characters without spaces goes when it reads as generated (base64 or hex
alphabet, high entropy, character classes changing as often as in random text), wherever it stands,
but what identifies rather than authorises stays: content digests, ARNs, and UUIDs, hex ids and
ULIDs under identifying names. A short token as people choose passwords (``Sommer2024``) goes under
a name that does not say what it is. Verdicts on short strings are cached per process.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections import Counter
from typing import Final

from kubevec.inference.redaction.names import is_identifying_name, says_yes_or_no
from kubevec.inference.redaction.vocabulary import ENTROPY_MIN_BITS, ENTROPY_MIN_LENGTH, REDACTED


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
ARN: Final = re.compile(
    r"arn:aws(?:-cn|-us-gov|-iso[a-z-]*)?:[a-z0-9-]{1,64}:[a-z0-9-]{0,32}:(?:\d{12})?:[\w+=,.@/:*-]{1,1024}"
)
#: The key a part stands under inside one run (``app=x,controller-uid=<uuid>``).
_KEY_IN_RUN: Final = re.compile(r"([A-Za-z_][\w./-]{0,63})[=:]\Z")
#: The key a value stands under in a string (``uid: x``, ``checksum/config=x``), read just before it.
_KEY_BEFORE: Final = re.compile(r"([A-Za-z_][\w./-]{0,63})[\"']?[ \t]*[:=][ \t]*[\"']?\Z")
_WORDY_RUN: Final = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}")


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


def deny_generated(value: str, *, key: str | None) -> str:
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


#: What is public by its grammar, however random it looks: an SSH public key, a certificate or public key
#: block, a URL's host (a server's name; credentials live in its userinfo, query or a hook's path), a UUID
#: segment of a URL's path (a tenant, a subscription), a MAC address, a cloud resource id (``vpc-0a1b...``).
_PUBLIC: Final = re.compile(
    r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com)\s+AAAA[A-Za-z0-9+/]{20,}={0,3}"
    r"|-----BEGIN (CERTIFICATE|PUBLIC KEY|X509 CRL|CERTIFICATE REQUEST|TRUSTED CERTIFICATE)-----"
    r"[A-Za-z0-9+/=\s]{0,20000}?-----END \1-----"
    r"|(?<=://)(?![^/\s]*@)[A-Za-z0-9][A-Za-z0-9.-]{0,252}(?=(?::\d{1,5})?(?:[/?#\s\"'\]),;]|$))"
    r"|(?<=/)[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?=[/\s\"']|$)"
    # an object's UID where a Kubernetes message names one: the kubelet's name_namespace(uid) of a Pod
    # (the name too), "pod <uid>", "uid <uid>"; a bare UUID elsewhere is judged as before (API keys
    # take this shape too)
    r"|(?<![\w.-])[a-z0-9][a-z0-9.-]{0,252}_[a-z0-9][a-z0-9-]{0,62}"
    r"\([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)"
    r"|(?:(?<=pod )|(?<=Pod )|(?<=uid )|(?<=UID )|(?<=uid=)|(?<=uid: )|(?<=UID: ))"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\w-])"
    r"|(?<![\w:-])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![\w:-])"
    r"|(?<![\w-])[a-z]{1,12}-[0-9a-f]{8}(?:[0-9a-f]{9})?(?![\w-])"
)
_PUBLIC_NEEDLE: Final = re.compile(
    r"ssh-|ecdsa-|-----BEGIN|://|[0-9a-fA-F]{2}[:-][0-9a-fA-F]{2}|[a-z]-[0-9a-f]{8}|\([0-9a-f]{8}-"
)
#: Placeholders a public part stands as while the rules run (private-use characters no rule reads).
_MASK: Final = re.compile("\ue000(\\d+)\ue001")


def mask_public(value: str, parts: list[str] | None = None) -> tuple[str, list[str]]:
    """``value`` with each part public by its grammar (:data:`_PUBLIC`) set aside, and the parts (``parts``
    when given: those set aside before): the rules judge the rest, :func:`unmask_public` puts them back. A
    webhook's host stays: its rule reads the URL whole."""
    parts = parts if parts is not None else []
    if _PUBLIC_NEEDLE.search(value) is None:
        return value, parts
    keyed = "-----BEGIN" in value and _OTHER_BLOCK.search(value) is not None

    def aside(match: re.Match[str]) -> str:
        if "hook" in match.group(0).lower() or (keyed and match.group(0).startswith("-----BEGIN")):
            return match.group(0)  # a certificate beside a key block goes with it: the file is a key's
        return set_aside(match.group(0), parts)

    return _PUBLIC.sub(aside, value), parts


def set_aside(part: str, parts: list[str]) -> str:
    """The placeholder ``part`` stands as while the rules run; :func:`unmask_public` puts it back."""
    parts.append(part)
    return f"\ue000{len(parts) - 1}\ue001"


#: A block that is not public (a private key, an encrypted or PGP block).
_OTHER_BLOCK: Final = re.compile(
    r"-----BEGIN (?!(?:CERTIFICATE|PUBLIC KEY|X509 CRL|CERTIFICATE REQUEST|TRUSTED CERTIFICATE)-----)[A-Z0-9 ]{1,64}-----"
)


def unmask_public(value: str, parts: list[str]) -> str:
    if not parts:
        return value
    return _MASK.sub(lambda m: parts[int(m.group(1))] if int(m.group(1)) < len(parts) else REDACTED, value)


def _deny_generated_in(value: str, identifying: bool) -> str:
    """The generated-looking runs of ``value`` replaced; ``identifying``: it stands under an identifying name."""

    def near_identifying(match: re.Match[str]) -> bool:
        if identifying:
            return True
        before = _KEY_BEFORE.search(value, max(0, match.start() - 80), match.start())
        return before is not None and is_identifying_name(before.group(1))

    def judge(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == REDACTED or _DIGEST.fullmatch(token) or ARN.fullmatch(token):
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


_CHOSEN: Final = re.compile(r"[^\s/:.@_,;=<>()\[\]{}\"'`|\\]{6,64}")


def looks_chosen_password(value: str) -> bool:
    """One token as people choose passwords: lower and upper case and digits (``Sommer2024``,
    ``Qz7mapleRiver``), or a symbol among letters and digits (``hunter2!``), and no separator that
    would make it a path, host, version, image or identifier. Under a name that does not say what the
    value is, such a token is dropped: its place and grammar do not say it is safe."""
    return 6 <= len(value) <= 64 and _looks_chosen(value)


#: A Kubernetes resource quantity (``1000Mi``, ``1.5Gi``, ``250m``, ``1e3``), as the API server parses one.
QUANTITY: Final = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?")


@functools.lru_cache(maxsize=16384)
def _looks_chosen(value: str) -> bool:
    if not _CHOSEN.fullmatch(value) or says_yes_or_no(value) or value.startswith(REDACTED):
        return False
    if "-" in value and grouped_code(value):
        return True  # a backup code or licence key as it is printed
    if QUANTITY.fullmatch(value):
        return False  # a Kubernetes quantity (memory=1000Mi, 1500m): its grammar says what it is
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


#: Groups of letters and digits joined by ``-``, as codes are printed for people to type.
_GROUPS: Final = re.compile(r"[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6}){2,9}")


@functools.lru_cache(maxsize=16384)
def grouped_code(value: str) -> bool:
    """A code printed in groups for people to type (backup and recovery codes, licence and product keys:
    ``k2pq-9tzm-w4xr``, ``4FQ7X-BN2K9-X7HM3``): three groups or more of one length (4 to 6), letters and
    digits mixed in at least two of them. Names built of parts have parts of different lengths (a UUID's
    8-4-4-4-12, ``web-7d9f8c6b5-x2k4p``, ``ip-10-0-1-23``) or parts that are words (``us-east-1a``)."""
    if _GROUPS.fullmatch(value) is None:
        return False
    groups = value.split("-")
    if len({len(group) for group in groups}) != 1:
        return False
    mixed = sum(1 for group in groups if not group.isalpha() and not group.isdigit())
    return mixed >= 2


def made_of_words(value: str) -> bool:
    """``RequireAndVerifyClientCert`` under ``clientAuth``: an enum spelled in words, not a key."""
    return sum(len(run) for run in _WORDY_RUN.findall(value)) >= 0.8 * len(value)


def names_a_thing(value: str) -> bool:
    """An ARN, a content digest or a Kubernetes qualified name under a ``*Key*``/``*Hash*`` name: it names
    a resource, a taint or a label (a toleration's or a selector's ``key: node.kubernetes.io/not-ready``),
    it opens nothing."""
    return ARN.fullmatch(value) is not None or _DIGEST.fullmatch(value) is not None or _qualified_name(value)


#: ``prefix/name`` as Kubernetes spells label, annotation, taint and extended-resource keys.
_QUALIFIED: Final = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}/([a-z0-9]+(?:[-._][a-z0-9]+)*)")


def _qualified_name(value: str) -> bool:
    """A DNS-prefixed name whose segments read as words or short tokens (``not-ready``, ``managed-by``,
    ``gpu``, ``v1``), not one long run of letters and digits, which is how a key made to look like one would read."""
    match = _QUALIFIED.fullmatch(value)
    if match is None:
        return False
    return all(part.isalpha() or len(part) <= 4 for part in re.split(r"[-._]", match.group(1)))
