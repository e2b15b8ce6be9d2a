"""The gate itself: every string and every object through the rules, within bounds.

:func:`redact_text` runs a string through the rules by value (:mod:`.patterns`), judges a string
that holds a JSON or YAML document as a structure, and ends with deny by default
(:mod:`.generated`). :func:`scrub` walks any JSON-like value: a field under a credential name
(:mod:`.names`) loses its value whatever its type, a ``{name, value}`` pair loses the value, a
list of strings is judged as the command line it makes. :func:`redact_object` drops what is never
kept (Secret and ConfigMap values, ``managedFields``, some annotations). The walk and the string
judging call each other (a string may hold a document), so they live together here.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import yaml

from kubevec.core.errors import TooComplex
from kubevec.core.nesting import json_too_deep
from kubevec.inference.bodies import Body
from kubevec.inference.bounds import CUT, MAX_DEPTH, MAX_STRING_CHARS, Budget, cut_string
from kubevec.inference.redaction.generated import (
    deny_generated,
    looks_chosen_password,
    looks_machine_generated,
    looks_random,
    made_of_words,
    mask_public,
    names_a_thing,
    set_aside,
    unmask_public,
)
from kubevec.inference.redaction.grammars import redact_config
from kubevec.inference.redaction.names import (
    DISGUISES,
    is_credential_name,
    is_placeholder,
    is_suspicious_name,
    name_words,
    says_what_it_is,
    says_yes_or_no,
    states_a_fact,
)
from kubevec.inference.redaction.patterns import (
    COLON_PAIR,
    RAW_VALUE_RULES,
    VALUE_RULES,
    apply_rules,
    colon_pair,
    judge_percent,
    redact_blocks,
    redact_equals_pairs,
)
from kubevec.inference.redaction.prose import keep_safe_label, keep_safe_words
from kubevec.inference.redaction.public import ENCODED, decoded_words, set_aside_named, summarise_certificates
from kubevec.inference.redaction.seeds import redact_seed_phrases
from kubevec.inference.redaction.vocabulary import (
    DROPPED_ANNOTATIONS,
    ENTROPY_MIN_LENGTH,
    REDACTED,
    REFERENCE_WORDS,
)


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
    if len(value) > MAX_STRING_CHARS:
        return _judged_then_cut(value, raw=raw, key=key)
    return _judged_whole(value, raw=raw, key=key)


#: A value up to this long is judged whole before it is cut to :data:`MAX_STRING_CHARS` (twice the cut, and
#: as long as a JSON or YAML document judged as a structure, :data:`MAX_STRUCTURED`); a longer one is judged
#: on its first ``JUDGED_CHARS``, cut back to a space. Either way the judged text reaches 32 KiB past the
#: cut, so a credential straddling the cut, or one whose context (a YAML parent key, a quote) lies past it,
#: is judged with what follows it, and the cost stays bounded (linear in ``JUDGED_CHARS``: 256 KiB judged
#: cost 0.4 s, this ~0.1 s) however long the value.
JUDGED_CHARS: Final = 65_536
#: Judged characters kept away from the end of what was judged, when judging shrank a longer value so much
#: that the kept part would reach it (what lies past that end was never read).
_JUDGED_MARGIN: Final = 4096


def _judged_then_cut(value: str, *, raw: bool, key: str | None) -> str:
    """Judge first, cut after: ``value`` judged with context past the cut, then cut to :data:`MAX_STRING_CHARS`."""
    judged = _judged_whole(cut_string(value, limit=JUDGED_CHARS), raw=raw, key=key)
    if len(value) > JUDGED_CHARS and len(judged) < MAX_STRING_CHARS + _JUDGED_MARGIN:
        judged = cut_string(judged, limit=max(len(judged) - _JUDGED_MARGIN, 0))
    return cut_string(judged)


def _judged_whole(value: str, *, raw: bool, key: str | None) -> str:
    summary = summarise_certificates(value)
    if summary is not None:
        return _judged_whole(summary, raw=raw, key=key)  # certificates, public keys: kept as what they say (.public)
    if not value.isascii():
        value = DISGUISES.sub("", value)  # pass\u200bword: x reads as password: x
    public: list[str] = []
    value = set_aside_named(value, public, key=key)  # UUIDs a word names, issuer URLs (.public)
    value, public = mask_public(value, public)  # public keys, certificates, hosts, resource ids: set aside
    if len(value) >= 8:
        value = ENCODED.sub(lambda match: _encoded_words(match, public), value)
    return unmask_public(_judged(value, raw=raw, key=key), public)


def _encoded_words(match: re.Match[str], public: list[str]) -> str:
    """A base64 run the rules would drop, set aside when it decodes to plain words the gate keeps whole."""
    token = match.group(0)
    if token.islower() or token.isupper() or not (looks_machine_generated(token) or looks_chosen_password(token)):
        return token
    decoded = decoded_words(token)
    if decoded is None or _judged_whole(decoded, raw=True, key=None) != decoded:
        return token  # base64 of password=hunter2, of a JWT, of a token: judged as before, and dropped
    return set_aside(token, public)


def _chosen(value: str) -> bool:
    """Reads as a chosen password (:func:`looks_chosen_password`) and is no base64 of plain words (``=`` and
    digits make ``dGVhbS1wYXltZW50cw==`` read as one; :func:`redact_text` judges what it decodes to)."""
    return looks_chosen_password(value) and decoded_words(value) is None


def _judged(value: str, *, raw: bool, key: str | None) -> str:
    if raw:
        structured = _redact_structured(value) if value.lstrip()[:1] in ("{", "[") or "\n" in value else None
        value = structured if structured is not None else redact_config(value, judge=_judge_setting)
        value = keep_safe_words(value)  # prose keeps its safe tokens only; the deny rules below are the second line
    value = judge_percent(apply_rules(value, (*VALUE_RULES, *RAW_VALUE_RULES) if raw else VALUE_RULES))
    value = redact_seed_phrases(value)  # words by nature, so prose keeps them: the word list says what they are
    if "=" in value:
        value = redact_equals_pairs(value)
    if raw and ":" in value:
        if "\n" in value:
            value = redact_blocks(value)
        value = COLON_PAIR.sub(colon_pair, value)
    return _TAIL.sub(REDACTED, deny_generated(value, key=key))


#: What a judgement left glued to a redaction marker that a password's characters begin: the rest of the
#: same word ("-pR00t!Dump2024": the prose rule took ``-pR00t`` as a word and kept ``!Dump2024``). A tail a
#: separator begins stays (``<redacted>@db:5432``, ``<redacted>/app``).
_TAIL: Final = re.compile(re.escape(REDACTED) + r"[!#$%^*+~?][^\s\"'|;&,)]*")


def _judge_setting(key: str, value: str) -> str:
    """One value of a config text (:mod:`.grammars`), judged as a field called ``key`` is."""
    judged = _scrub_field(key, value, under_credential=False, budget=Budget(), depth=1)
    return judged if isinstance(judged, str) else REDACTED


def _redact_structured(value: str) -> str | None:
    """A string that holds a JSON or YAML document, scrubbed as a structure (nested credentials too).

    None when it is not one, or when nothing in it is a credential (the text is then left as it
    was, formatting and all)."""
    stripped = value.strip()
    if json_too_deep(stripped, limit=MAX_DEPTH, strings=False):
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
        # a YAML mapping, or a block sequence (``- --db-password`` then ``- <value>``: a command line's
        # arguments one per item, judged as the items of a list are)
        mapping_or_list = ":" in stripped or stripped.startswith("- ")
        if "\n" in stripped and mapping_or_list and len(stripped) <= MAX_STRUCTURED:
            try:
                data = yaml.safe_load(stripped)
            except yaml.YAMLError:
                return None
            if isinstance(data, dict | list):
                cleaned = scrub(data, budget=Budget(nodes=MAX_STRUCTURED_NODES))
                if cleaned != data:
                    return yaml.safe_dump(
                        cleaned, sort_keys=False, allow_unicode=True, default_flow_style=False
                    ).strip()
    except (TooComplex, RecursionError):
        return REDACTED  # a document inside a string that expands past the bounds (YAML aliases): dropped whole
    return None


#: Values a document inside a string may expand to (YAML aliases share nodes: a few lines can name billions).
MAX_STRUCTURED_NODES: Final = 20_000


#: Embedded YAML longer than this is judged line by line only.
MAX_STRUCTURED: Final = 65_536


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
            str(k): (REDACTED if _chosen(v) and not says_what_it_is(str(k)) else redact_text(v, key=str(k)))
            if isinstance(v, str)
            else v
            for k, v in annotations.items()
            if k not in DROPPED_ANNOTATIONS and not is_credential_name(str(k).rsplit("/", 1)[-1])
        }
    labels = metadata.get("labels")
    if isinstance(labels, Mapping):
        out["labels"] = {
            str(k): REDACTED
            if (is_credential_name(str(k).rsplit("/", 1)[-1]) and not says_yes_or_no(str(v)))
            or (_chosen(str(v)) and not says_what_it_is(str(k)))
            else redact_text(keep_safe_label(str(v)), key=str(k))
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
                if not says_yes_or_no(str(value[field])):
                    out[field] = REDACTED  # {name: DB_PASSWORD, value: x} wherever it appears
        # a pair's name names its value, it is no half of it
        fields = [k for k in value if str(k) not in PAIR_NAME_FIELDS]
        _judge_neighbours([value[k] for k in fields], out, [str(k) for k in fields])
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
        _judge_neighbours(value, items, range(len(items)))
        return items
    if under_credential:
        return REDACTED
    if isinstance(value, str):
        if key is not None and _chosen(value) and not says_what_it_is(key):
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


def _judge_neighbours(values: list[Any], judged: Any, places: Sequence[Any]) -> None:
    """A token split across two list items or two neighbouring fields (``["ghp_abc123", "def456..."]``,
    ``part1``/``part2``) is judged joined as well as alone: when the join loses something that neither
    half lost alone, both halves go (also the half that alone looked harmless, ``ghp_abc123``). Only halves that could be one token cut in two are joined (no
    space or separator inside, one of them shorter than a run the deny rules judge alone), so a list of
    names or ids is not read as one long id."""
    for index in range(len(values) - 1):
        first, second = values[index], values[index + 1]
        if not (isinstance(first, str) and isinstance(second, str)):
            continue
        here, there = places[index], places[index + 1]
        kept_first, kept_second = judged[here] == first, judged[there] == second
        if not (kept_first or kept_second) or (judged[here], judged[there]) not in (
            (first, second),
            (REDACTED, second),
            (first, REDACTED),
        ):
            continue  # both halves already gone, or one partly rewritten: nothing left to join
        if min(len(first), len(second)) < 4 or min(len(first), len(second)) >= ENTROPY_MIN_LENGTH:
            continue
        joined = first + second
        if not ENTROPY_MIN_LENGTH <= len(joined) <= MAX_JOINED or not _TOKEN_HALF.fullmatch(joined):
            continue
        if _ONE_CLASS.fullmatch(joined):
            continue  # one class of characters (nginx, redis): no key, and most neighbours are this
        if not (kept_first and kept_second) and _PLAIN_WORD.fullmatch(first if kept_first else second):
            continue  # a user name next to its dropped password is no half of it
        # the join has no space, quote or separator: only the token formats and deny by default can read it
        if deny_generated(apply_rules(joined, VALUE_RULES), key=None) != joined:
            judged[here] = judged[there] = REDACTED


#: What may be half of a token cut in two: base64 and token alphabets, no separator a name or id would hold.
_TOKEN_HALF: Final = re.compile(r"[A-Za-z0-9+/=_]+")
#: Lowercase only, uppercase only or digits only (with the alphabet's signs).
_ONE_CLASS: Final = re.compile(r"[a-z+/=_]+|[A-Z+/=_]+|[0-9+/=_]+")
_PLAIN_WORD: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
#: Longest join judged (a key split in two; longer items are judged alone).
MAX_JOINED: Final = 512


#: A command-line flag on its own (its value is the next item of the list).
_FLAG: Final = re.compile(r"--?[A-Za-z][\w.-]*")


def _scrub_field(key: str, value: Any, *, under_credential: bool, budget: Budget, depth: int) -> Any:
    if is_credential_name(key):
        if states_a_fact(key, value):
            return value  # hasSecret: true, enableBasicAuth: false
        if isinstance(value, Mapping):
            # reference fields inside (name, key) survive
            return scrub(value, under_credential=True, budget=budget, depth=depth)
        if isinstance(value, str) and is_placeholder(value):
            return value  # password: ${DB_PASSWORD}: where the value is kept, not the value
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
        and not names_a_thing(value)
        and not made_of_words(value)
        and summarise_certificates(value) is None  # a public key's base64 under publicKey: public (.public)
    ):
        return REDACTED
    if isinstance(value, str) and _chosen(value) and not says_what_it_is(key):
        return REDACTED
    return scrub(value, key=key, budget=budget, depth=depth)
