"""Prose judged by what it is made of: only tokens known to be safe are kept, whatever the cue.

The rules by value (:mod:`.patterns`) deny what a credential looks like next to its cue ("the
password is x"); written another way ("break glass: x", "la clave es x", "recovery code x") the cue
is missed and the value stays. Prose is the opposite case: a sentence is made of words, and a token
that is no word, name, number or address has no business in it. So a line that reads as prose (at
least :data:`MIN_TOKENS` tokens, a third of them words) keeps each token that is one of:

- a word in any script (letters only, with a word's shape: ``CrashLoopBackOff`` and ``Größe``, not
  ``xKqPzL``), or hyphen, apostrophe, underscore or dot compounds of them (``l'application``,
  ``DB_HOST``, ``app.kubernetes.io``);
- a Kubernetes name, its generated suffixes included (``web-7d9f8c6b5-x2k4p``), short lowercase
  ids (``k8s``, ``amd64``, a short commit);
- a number, quantity (``500Mi``), version (``v1.2.3``), duration (``30s``), date or time (ISO), IP
  address, host, path, e-mail address (contact details, not credentials), a content digest;
- punctuation;

and a URL keeps its scheme, host and path, and its query values only under keys known to be harmless
(:data:`SAFE_QUERY_KEYS`: a signed URL's ``X-Amz-Signature``, ``sig`` or ``token`` is not one).
Anything else in prose (a random mixed token, base64, a long hex string, letters and digits without a
name's shape) becomes ``<redacted>``; so do app passwords written as four groups of four letters that
do not read as words (:func:`_four_letter_groups`). The deny rules still run afterwards: this is the
first line for prose, not the only one. A value of one or two tokens is no prose and is judged by the
deny rules alone, as before.
"""

from __future__ import annotations

import functools
import itertools
import re
import urllib.parse
from typing import Final

from kubevec.inference.redaction.generated import ARN, QUANTITY, grouped_code
from kubevec.inference.redaction.names import says_yes_or_no
from kubevec.inference.redaction.vocabulary import REDACTED

#: A line is prose when it has at least this many whitespace-separated tokens ...
MIN_TOKENS: Final = 3
#: ... of which at least this many, and a third, are words (letters only, punctuation around them aside).
MIN_WORDS: Final = 2

#: Query keys whose values say nothing secret: paging, language, versions, places, views, selectors.
SAFE_QUERY_KEYS: Final = frozenset(
    {"page", "per_page", "perpage", "pagesize", "page_size", "limit", "offset", "start", "end", "from", "to",
     "lang", "language", "locale", "hl", "ref", "branch", "tag", "version", "v", "region", "zone", "tab",
     "view", "sort", "order", "format", "type", "kind", "namespace", "name", "path", "file", "line", "mode",
     "theme", "q", "query", "search", "filter", "category", "section", "topic", "since", "until", "size",
     "timeout", "interval", "step", "watch", "labelselector", "fieldselector", "resourceversion", "container",
     "follow", "taillines", "pretty", "dryrun", "fieldmanager", "sslmode", "charset", "connect_timeout",
     "application_name", "replicaset", "authsource", "retrywrites", "w", "tls", "ssl", "readpreference",
     "maxpoolsize", "utm_source", "utm_medium", "utm_campaign", "id"}
)  # fmt: skip

#: The parts a token is cut into: content digests whole, else runs of word characters, dots and hyphens;
#: everything between (``= : / @ , ; ? & # ( ) [ ] { } < > + * $`` ...) is punctuation.
_PIECE: Final = re.compile(r"(?i:sha(?:1|224|256|384|512)|md5)[:-][0-9a-fA-F]{8,}|[\w.-]+")
_PART: Final = re.compile(r"[-_.]+")
_URL: Final = re.compile(r"([A-Za-z][\w+.-]{0,31}://)([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?", re.S)
_EDGE: Final = "\"'`«»“”„‘’()[]{}<>.,;:!?¿¡*|"
_DATETIME: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?"
)
_NUMBER: Final = re.compile(r"[+-]?\d{1,20}(?:[.,]\d{1,20})*%?")
_DURATION: Final = re.compile(r"(?:\d{1,9}(?:\.\d{1,9})?(?:ns|us|µs|ms|s|m|h|d|w|y))+")
_VERSION: Final = re.compile(r"[vV]?\d{1,6}(?:\.\d{1,9}){0,3}(?:(?:alpha|beta|rc)\d{0,3})?")
_VOWELS: Final = frozenset("aeiouyAEIOUY")
_HUMP: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
#: Letters and digits with a name's shape: acronyms with a short count or version (``HTTP2``, ``X509``,
#: ``EC2``, ``IPv6``, ``K8S``, ``Ed25519``), counts with a unit (``2FA``, ``5G``).
_NAMED_ALNUM: Final = re.compile(
    r"[A-Z]{1,8}\d{1,4}[a-z]?|[A-Z]{2,}[a-z]\d{1,2}|[A-Z]\d[A-Z]|[A-Z][a-z]?\d{3,5}|\d{1,4}[A-Za-z]{1,3}"
)


#: What stands between tokens: whitespace, and in scripts written without spaces (Chinese, Japanese) the
#: ideographic space, full stop, comma and brackets and the full-width signs (``，：；（）``), which stand where
#: a space would: ``数据库密码：x`` is three tokens, as ``database password: x`` is.
_GAP: Final = re.compile(
    r"[\s\u3000-\u3003\u3008-\u3011\u3014-\u301f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+"
)
_GAPS: Final = re.compile(f"({_GAP.pattern})")
_SPACES: Final = re.compile(r"(\s+)")
#: Letters of scripts written without spaces (CJK ideographs, kana, hangul): a run of other characters glued
#: to them (``パスワードXq7Lm9は``) is a token of its own, judged as one.
_CASELESS_RUN: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def keep_safe_words(value: str) -> str:
    """``value`` with every line that reads as prose reduced to its safe tokens (see the module docstring)."""
    if " " not in value and (value.isascii() or _GAP.search(value) is None):
        return value
    if "\n" not in value:
        return _prose_line(value) if len(value) <= _CACHED_LINE else _judge_line(value)
    return "\n".join(
        _prose_line(line) if len(line) <= _CACHED_LINE else _judge_line(line) for line in value.split("\n")
    )


#: Lines up to this long have their verdicts remembered (messages and descriptions recur across replicas).
_CACHED_LINE: Final = 512


def keep_safe_label(value: str) -> str:
    """A label value that reads as a sentence written without spaces (``break-glass-Zx9Qm2Lp7Rt4``: three
    parts or more joined by ``-``, ``_`` or ``.``, two of them words) keeps its safe parts only, as prose
    does; in any label value a part that is a word spelled in digits (:func:`spelled_in_digits`) goes;
    any other label value is left to the deny rules."""
    if " " in value or len(value) > _CACHED_LINE:
        return value
    parts = _LABEL_SPLIT.split(value)
    if any(spelled_in_digits(part) for part in parts[::2]):
        # a word spelled in digits is no name in any label (root.Gl4ssBr3ak-77): that part goes, however few
        return "".join(
            REDACTED if index % 2 == 0 and spelled_in_digits(part) else part for index, part in enumerate(parts)
        )
    words = sum(1 for part in parts[::2] if len(part) >= 2 and part.isalpha())
    if len(parts) < 5 or words < 2 or safe_piece(value):
        return value
    return "".join(part if index % 2 or _safe_part(part) or not part else REDACTED for index, part in enumerate(parts))


_LABEL_SPLIT: Final = re.compile(r"([-_.]+)")


@functools.lru_cache(maxsize=8192)
def _prose_line(line: str) -> str:
    return _judge_line(line)


def is_prose(line: str) -> bool:
    """At least :data:`MIN_TOKENS` tokens, :data:`MIN_WORDS` and a third of them words."""
    tokens = line.split() if line.isascii() else [token for token in _GAP.split(line) if token]
    if len(tokens) < MIN_TOKENS:
        return False
    words = sum(1 for token in tokens if token.strip(_EDGE).isalpha())
    return words >= MIN_WORDS and 3 * words >= len(tokens)


def _judge_line(line: str) -> str:
    if not is_prose(line):
        return line
    parts = (_SPACES if line.isascii() else _GAPS).split(line)
    # split with its separators kept: tokens at even places, what stands between them at odd ones
    judged = [judge_token(part) if part and not index % 2 else part for index, part in enumerate(parts)]
    _four_letter_groups(parts, judged)
    return "".join(judged)


@functools.lru_cache(maxsize=32768)
def judge_token(token: str) -> str:
    """One whitespace-separated token of prose: kept, or with its unsafe parts replaced."""
    core = token.strip(_EDGE)
    if not core:
        return token
    start = token.index(core)
    head, tail = token[:start], token[start + len(core) :]
    if core.endswith(REDACTED[:-1]) and tail.startswith(">"):
        core, tail = core + ">", tail[1:]  # the gate's own marker is not cut by the edges: judged again, it stays
    if _DATETIME.fullmatch(core) or (core.startswith("arn:") and ARN.fullmatch(core)):
        return token  # an ARN names a resource in an account (its id parts too); the deny rules still read it
    url = _URL.fullmatch(core) if "://" in core else None
    judged = _judge_url(url) if url is not None else _judge_pieces(core)
    return f"{head}{judged}{tail}"


def _judge_pieces(text: str) -> str:
    """``text`` with each piece between punctuation kept when safe, else replaced."""
    if "%" in text and re.search(r"%[0-9A-Fa-f]{2}", text):
        decoded = urllib.parse.unquote(text)
        return text if _judge_pieces(decoded.replace("%", " ")) == decoded.replace("%", " ") else REDACTED
    out: list[str] = []
    at = 0
    for piece in _PIECE.finditer(text):
        if not safe_piece(piece.group(0)):
            out.append(text[at : piece.start()])
            out.append(REDACTED)
            at = piece.end()
    if not out:
        return text
    out.append(text[at:])
    return "".join(out)


def _judge_url(url: re.Match[str]) -> str:
    """Scheme, host and path kept (path segments judged as pieces); query values only under safe keys."""
    scheme, authority, path, query, fragment = url.groups()
    userinfo, at, host = authority.rpartition("@")
    if at and (":" in userinfo or not safe_piece(userinfo)):
        userinfo = REDACTED
    out = [scheme, userinfo, at, _judge_pieces(host) if host else ""]
    out.append("/".join(_judge_pieces(segment) if segment else segment for segment in path.split("/")))
    if query:
        pairs = []
        for pair in re.split(r"([&;])", query[1:]):
            if pair in ("&", ";") or not pair:
                pairs.append(pair)
                continue
            key, equals, value = pair.partition("=")
            safe_key = urllib.parse.unquote(key).lower() in SAFE_QUERY_KEYS
            if not safe_piece(urllib.parse.unquote(key).replace(".", "_")):
                pairs.append(REDACTED)
            elif equals and not says_yes_or_no(value) and (not safe_key or _judge_pieces(value) != value):
                pairs.append(f"{key}={REDACTED}")
            else:
                pairs.append(pair)
        out.append("?" + "".join(pairs))
    if fragment:
        out.append("#" + _judge_pieces(fragment[1:]))
    return "".join(out)


@functools.lru_cache(maxsize=32768)
def safe_piece(piece: str) -> bool:
    """A piece between punctuation that is safe in prose: a number, quantity, duration, version, digest,
    or a word or name, alone or joined to others by ``-``, ``_``, ``.`` or an apostrophe."""
    core = piece.strip(".-_")
    if not core or core == REDACTED:
        return True
    if "-" in core and grouped_code(core):
        return False  # a backup code or licence key printed in groups (k2pq-9tzm-w4xr): each group alone passes
    if core[:1].isdigit() and (
        _NUMBER.fullmatch(core) or QUANTITY.fullmatch(core) or _DURATION.fullmatch(core) or _VERSION.fullmatch(core)
    ):
        return True
    if core[:3].lower() in ("sha", "md5") and (":" in core or "-" in core) and core.split(":")[0].isalnum():
        return True  # a content digest (sha256:...): names content, opens nothing
    return all(_safe_part(part) for part in _PART.split(core) if part)


def _safe_part(part: str) -> bool:
    if part.isdigit():
        return len(part) <= 20
    if part.isalpha():
        return word_shaped(part)
    if not part.isascii():
        if _CASELESS_RUN.search(part) is not None:
            # CJK, kana and hangul are words; what is glued to them is judged on its own (本番DB, パスワードXq7Lm9は)
            return all(_safe_part(run) for run in _CASELESS_RUN.split(part) if run)
        return not any(c.isascii() and c.isalpha() for c in part) or (
            part.isalnum() and _safe_part("".join(c for c in part if not c.isdigit()))
        )
    if not part.isalnum():
        return False
    if spelled_in_digits(part):
        return False  # hunt3r, P4ssw0rd, stag1ng: a word written with digits for letters, as passwords are
    if part.islower():
        # Kubernetes generated suffixes, short commits and image ids, amd64, k8s; a name and a number (web01, redis6)
        return len(part) <= 12 or re.fullmatch(r"[a-z]{2,}\d{1,6}|\d{1,4}[a-z]{2,}", part) is not None
    if len(part) > 64:
        return False
    return _NAMED_ALNUM.fullmatch(part) is not None or _words_and_counts(part)


@functools.lru_cache(maxsize=32768)
def spelled_in_digits(part: str) -> bool:
    """A word with digits written for some of its letters (``hunt3r2``, ``stag1ng``, ``P4ssw0rd``, ``Gl4ssBr3ak``):
    how people make a password from a word, and no name is spelled so. A digit that stands for a letter
    (0 1 3 4 5 7: o, i or l, e, a, s, t) sits inside a word's letters; names put digits at a boundary
    instead: a count or version after a name (``http1Max``, ``rate5m``, ``pop3s``, ``sha1sum``, ``log4j``),
    short letters around one (``k8s``, ``k3s``, ``g4dn``, ``i18n``, ``v1beta1``), or ids in alphabets with
    digits of their own (hex commits, Kubernetes' generated suffixes, which hold no vowel nor 0, 1, 3).

    So two such digits inside letters make a word spelled in digits, and so does one that leaves the
    letters after it without a vowel, two of them or more or more digits after them (``stag1ng``: ``ng``;
    ``passw0rd``: ``rd``; ``hunt3r2``: ``r`` then ``2``), after three letters of the same word or more."""
    if not part.isascii() or not part.isalnum() or part.isalpha() or part.isdigit():
        return False
    if part.isupper():
        part = part.lower()  # P4SSW0RD reads as p4ssw0rd
    if (
        _HEX_ID.fullmatch(part)
        or set(part) <= _KUBE_ALPHABET
        or _API_VERSION.fullmatch(part)
        or _DURATION.fullmatch(part)
    ):
        return False
    runs = _RUNS.findall(part)
    inside = [
        i
        for i in range(1, len(runs) - 1)
        if runs[i] in _LEET and runs[i - 1].isalpha() and runs[i + 1].isalpha() and not _STATUS_CLASS.match(runs[i + 1])
    ]
    if len(inside) >= 2:
        return True
    if not inside:
        return False
    i = inside[0]
    before = _TRAILING_LOWER.search(runs[i - 1])
    after = _LEADING_LOWER.match(runs[i + 1])
    if before is None or after is None or len(before.group(0)) < 3 or after.group(0) != runs[i + 1]:
        return False  # short letters before it (s3website, k3s), or a camel hump after it (http1Max)
    rest = after.group(0)
    more = i + 2 < len(runs)
    return not any(c in _VOWELS for c in rest) and (len(rest) >= 2 or more) and rest not in _UNITS


#: Digits written for letters: one of them, or two (``r00t``, ``l3tm31n``).
_LEET: Final = frozenset({*"013457", *(a + b for a in "013457" for b in "013457")})
_HEX_ID: Final = re.compile(r"[0-9a-f]+")
#: The alphabet of Kubernetes' generated names (``utilrand``): no vowels, no 0, 1 or 3.
_KUBE_ALPHABET: Final = frozenset("bcdfghjklmnpqrstvwxz2456789")
_API_VERSION: Final = re.compile(r"v\d+(?:(?:alpha|beta|rc)\d*)?")
#: HTTP status classes (``5xx``): a digit before ``xx`` is a count, not a letter.
_STATUS_CLASS: Final = re.compile(r"xx")
_TRAILING_LOWER: Final = re.compile(r"[a-z]+\Z")
_LEADING_LOWER: Final = re.compile(r"[a-z]*")
#: Units and suffixes after a count: durations (``rate5m``, ``burnrate1h``), plurals (``pop3s``), sizes.
_UNITS: Final = frozenset(
    {"s", "m", "h", "d", "w", "y", "ms", "us", "ns", "k", "x", "px", "kb", "mb", "gb", "tb", "js"}
)


def _words_and_counts(part: str) -> bool:
    """Letters and digits as identifiers join them (``UseHelm3Defaults``, ``Log4j``, ``Ed25519``, ``SHA256WithRSA``,
    ``Modern2023``): at most two short runs of digits, every run of letters an acronym or word-shaped, and a
    word of three letters or more among them. Not ``Qz7mapleRiver`` (``Qz`` is no word) nor ``8F3K``."""
    runs = _RUNS.findall(part)
    digits = [run for run in runs if run.isdigit()]
    if len(digits) > 2 or any(len(run) > 5 for run in digits):
        return False
    letters = [run for run in runs if not run.isdigit()]
    if not any(len(run) >= 3 for run in letters):
        return False
    for run in letters:
        if run.isupper() or run.islower():
            continue  # an acronym, a lowercase word, a unit or suffix after digits (Log4j, ec2)
        if len(run) < 3:
            return False  # Qz of Qz7maple
        if not word_shaped(run):
            return False
    return True


_RUNS: Final = re.compile(r"[A-Za-z]+|\d+")


@functools.lru_cache(maxsize=32768)
def word_shaped(word: str) -> bool:
    """Letters with the shape of a word: any script; one case (``sqlcmd``, ``TLS``, ``Größe``); camel humps
    that read as words or abbreviations (``CrashLoopBackOff``, ``KrbCCacheSecret``) rather than noise
    (``xKqPzL``: short humps, pairs no word holds, few vowels)."""
    if not word.isascii():
        changes = sum(1 for a, b in itertools.pairwise(word) if a.islower() and b.isupper())
        return changes <= 3
    if len(word) > 45:
        return False
    if word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower()):
        return True  # one case, letters only: a word, a tool or an acronym (as deny by default reads them too)
    if len(word) >= 6 and len(_rare_pairs(word)) >= 2:
        return False  # random letters (bXaUeTkLwQ): pairs no word holds
    if len(word) > 2 and word[-1] == "s" and word[-2].isupper():
        word = word[:-1]  # an acronym's plural (CRDs, IDs, URLs)
        if word.isupper():
            return len(word) <= 24
    humps = _HUMP.findall(word)
    if "".join(humps) != word or len(humps) > 8:
        return False
    if len(word) <= 4:
        return True  # KiB, iOS, eBPF
    # humps of a word read as words or abbreviations (tlsConfig, KrbCCacheSecret, PgBouncer); noise has
    # short humps (xKqPzL: x Kq Pz L) and few with a vowel
    plain = [hump for hump in humps if len(hump) == 1 or not hump.isupper()]
    if any(len(hump) > 8 for hump in humps if hump.isupper()):
        return False  # acronyms are short
    if any(len(hump) >= 3 and not _pronounceable(hump.lower()) for hump in plain):
        return False
    vowelled = sum(len(hump) for hump in plain if len(hump) >= 3 and any(c in _VOWELS for c in hump))
    if len(plain) <= 1:
        return True  # one word and acronyms (iSCSI, CephX)
    return 2 * sum(map(len, plain)) >= 5 * len(plain) and 3 * vowelled >= len(word)


def _rare_pairs(word: str) -> set[str]:
    """The distinct rare pairs inside the humps of ``word`` (not across them: ``labelNameLengthLimit``)."""
    return {
        hump[i : i + 2]
        for hump in (hump.lower() for hump in _HUMP.findall(word))
        for i in range(len(hump) - 1)
        if hump[i : i + 2] in _RARE_PAIRS
    }


def _pronounceable(hump: str) -> bool:
    """A lowercase part of a word that could be said: no six consonants in a row (``Downstream`` has five)."""
    return _HUMP_CONSONANTS.search(hump) is None


_HUMP_CONSONANTS: Final = re.compile(r"[bcdfghjklmnpqrstvwxz]{6,}")
#: Letter pairs seen less than 5 times in 1,000,000 pairs of the words of 7,409 descriptions in public CRDs (the
#: shared corpus: English prose and every product name in it; counted within camel-case humps). Random
#: letters hold several; none of the corpus's words of six letters or more holds two.
_RARE_PAIR_TEXT: Final = (
    "bb bf bg bk bn bq bv bw bx bz cf cg cj cv cw cx cz dj dq dx dz fb fg fh fj fm fn fp fv fw fx fz gd gj gk "
    "gq gx hg hh hj hk hq hv hw ih ij iw iy jc jd jf jg jh jj jl jn jp jq jr jt jx jy jz kh kj kk kq kx kz lj "
    "lq lx lz mc mf mh mj mk mq mr mw nq nx oh oq pf pj pn pq pw px pz qa qb qc qe qf qg qh qi qj qk qm qn qo "
    "qp qq qr qs qt qv qw qx qy qz rj rq rz sx sz tj tk tq tx uh uj uk uq uv uw uy uz vb vd vf vg vj vk vn vp "
    "vq vr vt vv vw vx vy vz wb wc wd wf wg wj wm wp wq wu wv wx wy wz xb xd xg xh xj xk xl xm xn xq xs xu xv "
    "xw xz yf yg yh yj yk yq yu yx zb zc zd zf zg zh zj zk zl zm zp zq zr zs zt zv zw zx zy zz"
)
_RARE_PAIRS: Final = frozenset(pair for pair in _RARE_PAIR_TEXT.split() if pair[0] != pair[1])  # rabbit, jazz
#: Two consonants a word may start with.
_ONSETS: Final = frozenset(
    [
        "bl",
        "br",
        "ch",
        "cl",
        "cr",
        "dr",
        "dw",
        "fl",
        "fr",
        "gl",
        "gn",
        "gr",
        "kl",
        "kn",
        "kr",
        "ph",
        "pl",
        "pr",
        "ps",
        "sc",
        "sh",
        "sk",
        "sl",
        "sm",
        "sn",
        "sp",
        "st",
        "sw",
        "th",
        "tr",
        "ts",
        "tw",
        "wh",
        "wr",
    ]
)
_GROUP: Final = re.compile(r"[a-z]{4}")


def _reads_as_word(group: str) -> bool:
    """A four-letter group that could be a word: a vowel, no rare pair, a possible start, no three consonants."""
    if not any(c in _VOWELS for c in group):
        return False
    if any(group[i : i + 2] in _RARE_PAIRS for i in range(3)):
        return False
    if group[0] not in _VOWELS and group[1] not in _VOWELS and group[:2] not in _ONSETS:
        return False
    return not any(all(c not in _VOWELS for c in group[i : i + 3]) for i in range(2))


def _four_letter_groups(parts: list[str], judged: list[str]) -> None:
    """App passwords as Google and Apple print them (``abcd efgh ijkl mnop``): four groups of four
    lowercase letters in a row, at least two of which do not read as words, are dropped together."""
    spots = [i for i, part in enumerate(parts) if part and not i % 2]
    groups = [_GROUP.fullmatch(parts[i].strip(_EDGE)) is not None for i in spots]
    marked: set[int] = set()
    for start in range(len(spots) - 3):
        window = range(start, start + 4)
        if all(groups[i] for i in window):
            odd = sum(1 for i in window if not _reads_as_word(parts[spots[i]].strip(_EDGE)))
            if odd >= 2:
                marked.update(window)
    if not marked:
        return
    ordered = sorted(marked)
    while len(ordered) > 4 and _reads_as_word(parts[spots[ordered[0]]].strip(_EDGE)):
        ordered.pop(0)
    while len(ordered) > 4 and _reads_as_word(parts[spots[ordered[-1]]].strip(_EDGE)):
        ordered.pop()
    for i in ordered:
        judged[spots[i]] = REDACTED


def plain_word(word: str) -> bool:
    """Letters that read as a word on their own, with no sentence around them to vouch for it (text decoded
    from base64): word-shaped, a vowel, sayable, and not two pairs no word holds (``kqzvxwtrbp`` is none)."""
    if not word.isalpha() or not word_shaped(word):
        return False
    if not word.isascii():
        return True
    lower = word.lower()
    if len(lower) >= 4 and not any(c in _VOWELS for c in lower):
        return False
    return _pronounceable(lower) and not (len(lower) >= 6 and len(_rare_pairs(lower)) >= 2)
