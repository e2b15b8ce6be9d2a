"""Judging by name: whether a field called X holds a credential, refers to one, identifies or describes.

A name is split into words (camelCase, snake_case, kebab-case, dots, digits; invisible characters
dropped and lookalike letters read as Latin, so a name written to slip past reads as it looks) and
the words are judged against :mod:`.vocabulary`. Names repeat across every object, so the verdicts
are cached per process.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Any, Final

from kubevec.core.words import camel_words
from kubevec.inference.redaction.vocabulary import (
    CREDENTIAL_LAST_PHRASES,
    CREDENTIAL_LAST_WORDS,
    CREDENTIAL_PHRASES,
    CREDENTIAL_RUN_ENDINGS,
    CREDENTIAL_SUFFIXES,
    CREDENTIAL_WORDS,
    DESCRIPTIVE_WORDS,
    FOREIGN_CREDENTIAL_PARTS,
    FOREIGN_CREDENTIAL_WORDS,
    IDENTIFYING_WORDS,
    NOT_CREDENTIAL_RUNS,
    PREDICATE_WORDS,
    REFERENCE_WORDS,
    SUSPICIOUS_WORDS,
    YES_NO,
)

#: Pair names that are not credential names in a schema but are in a query or connection string.
_PAIR_NAMES: Final = re.compile(r"(?i)(?:sig|signature|x-amz-signature|accountkey|sharedaccesskey)")


def says_yes_or_no(value: str) -> bool:
    """A value that holds no secret whatever its name says: a yes/no word (``password: false``), or a
    placeholder naming where the value is kept (``${DB_PASSWORD}``, ``$(PASS)``, ``{{ .Values.db.password }}``,
    ``%(password)s``): a template's reference, not the credential."""
    bare = value.strip("\"'")
    return bare.lower() in YES_NO or is_placeholder(bare)


def is_placeholder(value: str) -> bool:
    """A whole value that only refers to one kept elsewhere (``${DB_PASSWORD}``, ``{{ .Values.db.password }}``)."""
    return _PLACEHOLDER.fullmatch(value.strip()) is not None


#: A whole value that only refers to a value kept elsewhere: shell, make, Helm/Go and Python templates.
_PLACEHOLDER: Final = re.compile(
    r"\$\{[A-Za-z_][\w.:-]{0,127}\}|\$\([A-Za-z_]\w{0,127}\)|\{\{-?\s*(?:\.|\$|[a-z]+\s)[^{}]{0,250}\}\}|%\([\w.]{1,64}\)s"
)


def holds_credential(name: str) -> bool:
    return is_credential_name(name) or _PAIR_NAMES.fullmatch(name) is not None


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
        name = DISGUISES.sub("", name)
        if any("a" <= c.lower() <= "z" for c in name):  # Latin mixed with lookalikes; a Cyrillic word stays one
            name = name.translate(_LOOKALIKES)
        if not name.isascii():
            name = "".join(_fold(c) for c in name)
    return tuple(word.lower() for word in camel_words(name, digits_apart=True))


#: Characters that show as nothing: a name holding one reads as the name without it.
DISGUISES: Final = re.compile(
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


#: The prefix of a Kubernetes label or annotation key: a DNS subdomain (at least one dot).
_DNS_PREFIX: Final = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+")


#: Phrases that make a name a credential's when it ends with them.
_ENDING_PHRASES: Final = CREDENTIAL_PHRASES | CREDENTIAL_LAST_PHRASES


@functools.lru_cache(maxsize=8192)
def is_credential_name(name: str) -> bool:
    """Whether a field called ``name`` holds a credential (see the module docstring for the rules).

    Cached: every key of every object and every ``NAME=`` in its strings asks, and names repeat.
    A label or annotation key's DNS prefix names its owner, not the value: ``aggregate-to-admin``
    under ``rbac.authorization.k8s.io/`` is judged as ``aggregate-to-admin``.
    """
    prefix, slash, last = name.rpartition("/")
    if slash and _DNS_PREFIX.fullmatch(prefix):
        name = last
    words = name_words(name)
    if not words:
        return False
    pairs = set(itertools.pairwise(words))
    if (words[-2:] if len(words) > 1 else ()) in _ENDING_PHRASES:
        return True  # ends with the phrase itself: webhookUrl, secretAccessKey, break-glass
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


def states_a_fact(key: str, value: Any) -> bool:
    words = name_words(key)
    yes_no = isinstance(value, bool) or (isinstance(value, str) and says_yes_or_no(value))
    return bool(words) and words[0] in PREDICATE_WORDS and yes_no


def is_suspicious_name(name: str) -> bool:
    return not SUSPICIOUS_WORDS.isdisjoint(name_words(name))


@functools.lru_cache(maxsize=8192)
def is_identifying_name(name: str) -> bool:
    """Whether a field called ``name`` holds an identifier (``uid``, ``checksum/config``, ``targetRevision``)."""
    return not is_credential_name(name) and any(word in IDENTIFYING_WORDS for word in name_words(name))


def says_what_it_is(key: str) -> bool:
    """Whether a field called ``key`` names the kind of thing its value is (or identifies it)."""
    words = name_words(key.rsplit("/", 1)[-1])
    return bool(words) and (words[-1] in DESCRIPTIVE_WORDS or words[-1] in IDENTIFYING_WORDS)
