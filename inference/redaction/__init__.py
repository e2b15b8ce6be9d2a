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

Prose is judged the other way round first (:mod:`.prose`): a value that reads as sentences keeps only
the tokens known to be safe (words in any script, names, numbers, quantities, versions, dates, hosts,
paths; a URL's query only under harmless keys), and every other token goes whatever its cue; the
rules above still run after it. Two neighbouring list items or fields that could be halves of one
token are judged joined as well as alone.

Names are judged in the languages Kubernetes users write them in (:data:`FOREIGN_CREDENTIAL_WORDS`:
``passwort``, ``motDePasse``, ``contraseña``, ``senha``, ``пароль``, ``密码``, ``パスワード``...),
and a ``{name: X, value: Y}`` pair (also ``key``/``parameter`` with ``value``/``default``) loses
``Y`` wherever it appears when ``X`` is a credential name, as an env var does in a Pod.

The rules live in one module per family, each with its reasons: :mod:`.vocabulary` (the words),
:mod:`.names` (judging a field name), :mod:`.patterns` (judging a string's value),
:mod:`.generated` (deny by default), :mod:`.prose` (safe words first) and :mod:`.gate` (strings and
objects walked through them all).
Import from ``kubevec.inference.redaction``: the names below are the gate's public face.
"""

from __future__ import annotations

from kubevec.inference.redaction.gate import (
    MAX_COMMAND_CHARS,
    MAX_COMMAND_ITEMS,
    MAX_STRUCTURED,
    MAX_STRUCTURED_NODES,
    PAIR_NAME_FIELDS,
    PAIR_VALUE_FIELDS,
    Redacted,
    is_credential_value,
    redact_object,
    redact_text,
    scrub,
)
from kubevec.inference.redaction.generated import (
    CACHED_LENGTH,
    looks_chosen_password,
    looks_machine_generated,
    looks_random,
)
from kubevec.inference.redaction.names import (
    is_credential_name,
    is_identifying_name,
    is_suspicious_name,
    name_words,
    says_what_it_is,
)
from kubevec.inference.redaction.patterns import (
    TOOL_PASSWORD_FLAGS,
    Replacement,
)
from kubevec.inference.redaction.vocabulary import (
    CREDENTIAL_LAST_PHRASES,
    CREDENTIAL_LAST_WORDS,
    CREDENTIAL_PHRASES,
    CREDENTIAL_RUN_ENDINGS,
    CREDENTIAL_SUFFIXES,
    CREDENTIAL_WORDS,
    DESCRIPTIVE_WORDS,
    DROPPED_ANNOTATIONS,
    ENTROPY_MIN_BITS,
    ENTROPY_MIN_LENGTH,
    FOREIGN_CREDENTIAL_PARTS,
    FOREIGN_CREDENTIAL_WORDS,
    IDENTIFYING_WORDS,
    LAST_APPLIED,
    NOT_CREDENTIAL_RUNS,
    PREDICATE_WORDS,
    REDACTED,
    REFERENCE_WORDS,
    SUSPICIOUS_WORDS,
    YES_NO,
)

__all__ = [
    "CACHED_LENGTH",
    "CREDENTIAL_LAST_PHRASES",
    "CREDENTIAL_LAST_WORDS",
    "CREDENTIAL_PHRASES",
    "CREDENTIAL_RUN_ENDINGS",
    "CREDENTIAL_SUFFIXES",
    "CREDENTIAL_WORDS",
    "DESCRIPTIVE_WORDS",
    "DROPPED_ANNOTATIONS",
    "ENTROPY_MIN_BITS",
    "ENTROPY_MIN_LENGTH",
    "FOREIGN_CREDENTIAL_PARTS",
    "FOREIGN_CREDENTIAL_WORDS",
    "IDENTIFYING_WORDS",
    "LAST_APPLIED",
    "MAX_COMMAND_CHARS",
    "MAX_COMMAND_ITEMS",
    "MAX_STRUCTURED",
    "MAX_STRUCTURED_NODES",
    "NOT_CREDENTIAL_RUNS",
    "PAIR_NAME_FIELDS",
    "PAIR_VALUE_FIELDS",
    "PREDICATE_WORDS",
    "REDACTED",
    "REFERENCE_WORDS",
    "SUSPICIOUS_WORDS",
    "TOOL_PASSWORD_FLAGS",
    "YES_NO",
    "Redacted",
    "Replacement",
    "is_credential_name",
    "is_credential_value",
    "is_identifying_name",
    "is_suspicious_name",
    "looks_chosen_password",
    "looks_machine_generated",
    "looks_random",
    "name_words",
    "redact_object",
    "redact_text",
    "says_what_it_is",
    "scrub",
]
