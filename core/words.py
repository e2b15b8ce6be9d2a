"""Identifiers into words: ``secretAccessKey`` -> secret Access Key, ``HTTPRoute`` -> HTTP Route.

The one camelCase splitter. Kubernetes names its kinds and fields in camelCase and PascalCase with
acronyms (``HTTPRoute``, ``podIP``, ``X509Certificate``), and three readers want their words: the
gate judges a field name by its words (``dbPassword``), references guess a kind from a field's stem
(``issuerRef`` -> Issuer), and capability documents write field paths as words an embedding model
reads (``minReplicaCount`` -> min replica count). They cut in the same places, at a case change,
and differ only in what else they cut at; each difference is a keyword here, because changing one
would change stored documents (and re-embed them) or the gate's verdicts.
"""

from __future__ import annotations

import re
from typing import Final

#: A word: an optional capital and lowercase letters or digits (``secret``, ``Key``, ``x509``), or a run of
#: capitals not followed by a lowercase letter (``HTTP`` of ``HTTPRoute``). Anything else separates words.
_WORDS: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: The same with digits a word of their own (``password2`` -> password, 2) and the letters of other
#: scripts kept as words (``数据库密码``, ``пароль``).
_WORDS_DIGITS_APART: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^\W\dA-Za-z_]+")
#: Where a word ends inside a run of letters: a lowercase letter or digit before a capital
#: (``min|Replica``), or a capital before a capitalised word (``HTTP|Route``).
_CASE_CHANGE: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def camel_words(name: str, *, digits_apart: bool = False) -> list[str]:
    """The words of ``name`` as written (case kept): ``secretKeyRef`` -> [secret, Key, Ref].

    Underscores, hyphens, dots and other signs separate words and are dropped. ``digits_apart``: as the
    gate reads names, where ``password2`` must read as ``password``: digits make a word of their own and
    letters of scripts without case are kept as words.
    """
    return (_WORDS_DIGITS_APART if digits_apart else _WORDS).findall(name)


def camel_phrase(name: str) -> str:
    """``minReplicaCount`` -> ``min replica count``: ``name`` cut at its case changes and underscores only,
    lowercased, everything else kept as written (``x-forwarded-for``, ``http2``), as document text shows it."""
    return " ".join(part.lower() for part in _CASE_CHANGE.split(name.replace("_", " ")) if part)
