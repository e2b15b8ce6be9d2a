"""The document contract shared by the controller, the backends and agents.

A :class:`Document` is what gets embedded and stored. Its ``content_hash`` covers the text and the
metadata, its ``text_hash`` the text alone; both are stored in the payload. From the two the sync
engine tells "nothing changed" (skip), "only metadata changed" (re-use the stored vector) and "text
changed" (embed) apart without reading the store or embedding anything to find out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from typing import Final

from kubevec.core import fields
from kubevec.core.errors import InferenceError as InferenceError
from kubevec.core.types import Metadata as Metadata
from kubevec.core.types import MetadataValue as MetadataValue
from kubevec.core.types import Scalar as Scalar
from kubevec.inference.collections import CAPABILITIES as CAPABILITIES
from kubevec.inference.collections import COLLECTIONS as COLLECTIONS
from kubevec.inference.collections import INSTANCES as INSTANCES
from kubevec.inference.collections import Collection as Collection
from kubevec.inference.identity import parse_object_key
from kubevec.inference.redaction import REDACTED, redact_text

#: Bumped whenever document text or metadata layout changes, so old documents are rebuilt.
SCHEMA_VERSION: Final = 1


#: Metadata fields agents filter on by exact value (``indexed`` in :mod:`kubevec.core.fields`); the
#: controller passes them to ``ensure_collection(indexed=...)`` so a server backend indexes each (a
#: new field is indexed on the next start, also in an existing collection).
INDEXED_FIELDS: Final = fields.indexed()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Document:
    """One record-to-be: its id, the text to embed, and filterable metadata (with the hash)."""

    id: str
    collection: Collection
    text: str
    metadata: Metadata

    @property
    def content_hash(self) -> str:
        return fields.CONTENT_HASH.of(self.metadata)

    @property
    def text_hash(self) -> str:
        return fields.TEXT_HASH.of(self.metadata)

    @property
    def built_from(self) -> str:
        return fields.BUILT_FROM.of(self.metadata)

    @property
    def cluster(self) -> str:
        return fields.CLUSTER.of(self.metadata)


#: What a document was built from: the source object's uid and version (``resourceVersion``, a
#: CRD's ``generation``), the builder's inputs and kubevec's version. Left out of the content hash:
#: a new resourceVersion with the same document writes nothing, so the stored value can be older
#: than the object; when it equals the object's, the stored document is what building would give.
BUILT_FROM: Final = fields.BUILT_FROM.name
#: Stamped by :func:`make_document`, derived from the rest or bookkeeping, so left out of the content hash.
HASH_FIELDS: Final = frozenset({fields.CONTENT_HASH.name, fields.TEXT_HASH.name, BUILT_FROM})


def content_hash(*, text: str, metadata: Metadata) -> str:
    """sha256 over the text, the canonical metadata (minus the hashes) and the schema version."""
    body = {k: v for k, v in metadata.items() if k not in HASH_FIELDS}
    canonical = json.dumps([SCHEMA_VERSION, text, body], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def text_hash(text: str) -> str:
    """sha256 over the text alone: equal text hashes mean the stored vector can be re-used."""
    return hashlib.sha256(text.encode()).hexdigest()


def make_document(
    *,
    id: str,
    collection: Collection,
    text: str,
    metadata: Metadata,
    bookkeeping: Metadata | None = None,
    identity: Sequence[str] = (),
) -> Document:
    """Build a :class:`Document`, stamping ``schema_version``, ``content_hash`` and ``text_hash`` into its metadata.

    Every string of the text and the metadata passes the value redactor once more here, whatever
    built it: the last line of defence for credentials in places no builder thought of.
    ``bookkeeping`` is kubevec's own (hashes of other documents, which read as random tokens):
    hashed with the rest, never redacted; its values come from documents that passed here already.
    ``identity`` is the object's own name, namespace and uid and its owner's name: never redacted
    where they stand as themselves (a UUID-named object read ``Gizmo <redacted>``; hash-suffixed
    ReplicaSet names lost their owners), when they are Kubernetes names (what the API server allows).
    """
    # only names the gate would not keep on their own, or generated ones (a digit: web-5cb4d8b4b4), are
    # shielded: a name like "password" stays visible to the rules that read the words around it
    names = [
        name
        for name in identity
        if is_kubernetes_name(name) and (any(c.isdigit() for c in name) or redact_text(name, raw=False) != name)
    ]
    text = _unmasked(redact_text(_masked(clean_text(text), names), raw=False), names)
    stamped: dict[str, MetadataValue] = {
        **redact_metadata(metadata, identity=names),
        **(bookkeeping or {}),
        "schema_version": SCHEMA_VERSION,
    }
    for key, value in stamped.items():
        _check_metadata_value(key, value)
    stamped["content_hash"] = content_hash(text=text, metadata=stamped)
    stamped["text_hash"] = text_hash(text)
    return Document(id=id, collection=collection, text=text, metadata=stamped)


def redact_metadata(metadata: Metadata, *, identity: Sequence[str] = ()) -> dict[str, MetadataValue]:
    """Every string of a payload through the value redactor (object keys judged part by part), checked
    to be scalars or lists of scalars: what :func:`make_document` and the change history store.
    Identity fields holding one of ``identity`` are kept as they are."""
    out = {
        key: value
        if key in IDENTITY_FIELDS and isinstance(value, str) and _is_identity(value, identity)
        else _redact_value(value, key=key)
        for key, value in metadata.items()
    }
    for key, value in out.items():
        _check_metadata_value(key, value)
    return out


def with_built_from(document: Document, built_from: str) -> Document:
    """The same document, saying what it was built from (the hashes stay: the field is not hashed)."""
    return dataclasses.replace(document, metadata={**document.metadata, BUILT_FROM: built_from})


#: C0/C1 controls but tab and newline, zero-width characters, and bidirectional overrides: invisible in
#: an agent's answer, and an RTL override can make ``gpj.exe`` read as ``exe.jpg``.
#: Control, zero-width and bidi characters, and the private-use marks placeholders are made of (no text
#: an object holds can forge one).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ue000-\ue003]"
)


def clean_text(value: str) -> str:
    """``value`` without control, zero-width and bidi-override characters."""
    return _INVISIBLE.sub("", value)


#: Payload fields naming the object itself or its owner (``owner`` is ``Kind/name``).
IDENTITY_FIELDS: Final = frozenset({"name", "namespace", "uid", "owner"})
#: What the API server allows as an object's name (a DNS subdomain) or uid: nothing else is kept unjudged.
_KUBERNETES_NAME: Final = re.compile(r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?")


def is_kubernetes_name(value: str) -> bool:
    return _KUBERNETES_NAME.fullmatch(value) is not None


def _is_identity(value: str, identity: Sequence[str]) -> bool:
    return value in identity or ("/" in value and value.rpartition("/")[2] in identity)


def _masked(text: str, names: Sequence[str]) -> str:
    """``text`` with each identity name, where it stands whole, replaced by a placeholder no rule reads."""
    if not names:
        return text
    placeholders = {name: f"{_OPEN}{index}{_CLOSE}" for index, name in enumerate(names)}
    return _NAME_RUN.sub(lambda m: placeholders.get(m.group(0), m.group(0)), text)


def _unmasked(text: str, names: Sequence[str]) -> str:
    for index, name in enumerate(names):
        text = text.replace(f"{_OPEN}{index}{_CLOSE}", name)
    return text


#: The placeholder marks of :func:`_masked`: private-use characters of their own, apart from the gate's
#: (``\ue000``/``\ue001``, :mod:`kubevec.inference.redaction.generated`), which puts back its placeholders
#: by number: shared marks made a namespace read as a URL's host (``namespace: t5-inference``) or ``<redacted>``.
_OPEN: Final = "\ue002"
_CLOSE: Final = "\ue003"


#: A run that could be a whole Kubernetes name (names are made of these characters).
_NAME_RUN: Final = re.compile(r"[\w.-]+")


#: Fields holding object keys (``Kind/namespace/name``): identifiers, judged part by part.
OBJECT_KEY_FIELDS: Final = frozenset({"refs"})


def _redact_value(value: MetadataValue, *, key: str) -> MetadataValue:
    if isinstance(value, str):
        return redact_text(clean_text(value), raw=False, key=key)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        if key in OBJECT_KEY_FIELDS:
            return [_redact_object_key(clean_text(str(item))) for item in value]
        if key in PAIR_FIELDS:
            return [_redact_pair(clean_text(str(item)), key=key) for item in value]
        return [redact_text(clean_text(str(item)), raw=False, key=key) for item in value]
    return value


#: Fields holding ``k=v`` pairs (labels): each value judged under its own key, as the object had it.
PAIR_FIELDS: Final = frozenset({"labels", "pod_labels", "selector", "service_selector"})


def _redact_pair(value: str, *, key: str) -> str:
    """``controller-uid=<uuid>`` judged as the value of ``controller-uid``, not as one run of a ``labels`` list."""
    name, sep, rest = value.partition("=")
    if not sep or not name:
        return redact_text(value, raw=False, key=key)
    return f"{name}={redact_text(rest, raw=False, key=name)}"


def _redact_object_key(value: str) -> str:
    """An object key whose namespace and name pass as a namespace and a name; else redacted whole.

    Judged as one string, ``Secret/team-6e3bb8/db`` read as the word "Secret" next to a random-looking
    token, and about one Secret reference in ten in a generated namespace was redacted: "what breaks
    if this Secret goes" then missed its dependants. A name that is itself a credential-shaped token
    is still redacted, with the key it is in.
    """
    parsed = parse_object_key(value)
    if parsed is None:
        return redact_text(value, raw=False, key="refs")
    kind, namespace, name = parsed
    if redact_text(name, raw=False, key="name") != name or redact_text(kind, raw=False, key="kind") != kind:
        return REDACTED
    if namespace is not None and redact_text(namespace, raw=False, key="namespace") != namespace:
        return REDACTED
    return value


def _check_metadata_value(key: str, value: object) -> None:
    if isinstance(value, str | int | float | bool):
        return
    if isinstance(value, list) and all(isinstance(item, str | int | float | bool) for item in value):
        return
    raise InferenceError(f"Metadata field {key!r} must be a scalar or a list of scalars, got {type(value).__name__}")
