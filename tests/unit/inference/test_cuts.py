"""Judge first, cut after: every place of the write path that cuts text, found by reading the code, and
each one given a secret straddling its cut.

A credential cut before it is judged leaks its first characters: ``ghp_`` and 11 characters match no
token format, ``password=hunt`` is a short value. So the gate (``kubevec.inference.redaction``) judges
a value whole, and only then is it cut, joined or summarised. Two tests keep it so:

- :func:`test_every_cut_is_registered` walks the write path's modules (an AST) and finds every slice
  of text with a fixed bound (``value[:80]``, ``text[:limit]``, ``flat[: limit - 3]``), every call of a
  known cutter (``short``, ``first_sentences``, ``cut_string``, ``textwrap``...) and every join with
  nothing between its parts (``"".join``: two values judged apart become one token). Each must be in
  :data:`CUTS` (text from an object, with a case below) or :data:`NOT_TEXT` (with why no object's
  text is cut there), as many times as the code has it: a new cut fails until it is registered.
- :func:`test_no_part_of_a_secret_survives_a_cut` runs the real builder of each registered cut
  (``build_instance``, ``describe_crd``, ``change_record``, a Warning Event's metadata) on an object
  whose secret starts a few characters before the cut point, and asserts that no run of 6 or more of
  its characters reaches the document's text or metadata.

A join with a separator (``", ".join`` of values judged apart) makes no token the gate did not see, and
every joined line is judged again whole: a document's by ``make_document``, a change record's by
``change_record``.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from kubevec.controller.runtime.logs import ClipFilter
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.documents import DocumentBuilder
from kubevec.inference.bodies import as_body
from kubevec.inference.bounds import MAX_STRING_CHARS
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.change_records import Stored, change_record
from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import redact_text
from kubevec.inference.warnings import Warning

ROOT: Final = Path(__file__).resolve().parents[3]
#: The write path: what builds documents, change records, health and warnings, and what writes them.
MODULES: Final = sorted(
    [
        *(ROOT / "inference" / "instances").glob("*.py"),
        *(
            ROOT / "inference" / f"{name}.py"
            for name in (
                "addresses",
                "capabilities",
                "change_records",
                "documents",
                "health",
                "references",
                "schema",
                "warnings",
            )
        ),
        *(
            ROOT / "controller" / "sync" / f"{name}.py"
            for name in ("changelog", "documents", "events", "history", "status")
        ),
        ROOT / "controller" / "runtime" / "logs.py",
        ROOT / "inference" / "redaction" / "gate.py",
    ]
)
#: Functions that cut the text they are given.
CUTTERS: Final = frozenset({"short", "_short", "_cut", "cut_string", "first_sentences", "shorten", "wrap", "fill"})

TOKEN: Final = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_KEY_ID: Final = "AKIAZ7VRSQ5TJN2XMY4K"
PASSWORD: Final = "Qz7mapleRiverHq42"
#: (what the object holds at the cut, what must not reach the document).
SECRETS: Final = ((TOKEN, TOKEN), (AWS_KEY_ID, AWS_KEY_ID), (f"password={PASSWORD}", PASSWORD))
#: How far before the cut the secret starts (characters; words for a cut by words).
OFFSETS: Final = (1, 2, 4, 7, 11, 16, 23, 30, 38)
#: A harmless word: cut where the case says, it proves the case reaches its cut.
MARKER: Final = "zebracrossingmarker"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Site:
    """One function's cuts of an object's text: how many the code has, and a builder putting a value at them.

    ``build(value, offset)`` runs the real builder on an object whose ``value`` starts ``offset``
    characters (``words``: words) before the cut, and returns all it produced as one string."""

    cuts: int
    build: Callable[[str, int], str]
    words: bool = False
    #: Whether the marker fits before the cut (a digest's 19 characters do not hold it).
    fits: bool = True


def _pad(length: int) -> str:
    """Words of exactly ``length`` characters, ending in a space (a value after it stands on its own)."""
    return ("plain words " * (length // 12 + 2))[: max(length - 1, 0)] + " " if length > 0 else ""


def _dumped(*parts: Any) -> str:
    return json.dumps(parts, default=str, ensure_ascii=False)


def _instance(obj: dict[str, Any], *, plural: str = "gizmos", warning: Warning | None = None) -> str:
    document = build_instance(as_body(obj), plural=plural, cluster="c", warning=warning).to_document()
    return _dumped(document.text, document.metadata)


def _gizmo(spec: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": "g", "namespace": "shop", "uid": "u-1", **extra.pop("metadata", {})},
        "spec": spec or {"size": 1},
        **extra,
    }


def annotation(value: str, offset: int) -> str:
    """``short(value, limit=200)``: the value's first 197 characters and ``...``."""
    return _instance(_gizmo(metadata={"annotations": {"description": _pad(197 - offset) + value}}))


def llm_note(value: str, offset: int) -> str:
    """What an LLM said a workload is (``describer.llm.workloads``): judged, then ``short(note, limit=300)``."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u-1"},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "acme/web:1"}]}}},
    }
    note = _pad(297 - offset) + value
    document = build_instance(as_body(deployment), plural="deployments", notes=lambda _: note).to_document()
    return _dumped(document.text, document.metadata)


def spec_scalar(value: str, offset: int) -> str:
    """A custom resource's string field: ``short(value, limit=80)``."""
    return _instance(_gizmo({"endpoint": _pad(77 - offset) + value}))


def spec_list(value: str, offset: int) -> str:
    """A list of strings: each item ``short(item, limit=80)``."""
    return _instance(_gizmo({"hosts": ["one.example.com", _pad(77 - offset) + value]}))


def spec_joined(value: str, offset: int) -> str:
    """One path's values joined (``items.note: a, b, c``) and cut to 240."""
    notes = [f"note {i} {_pad(60).strip()}" for i in range(3)]
    before = len(", ".join(notes)) + 2
    return _instance(_gizmo({"items": [{"note": n} for n in [*notes, _pad(237 - before - offset) + value]]}))


def status_message(value: str, offset: int) -> str:
    """A condition's message, cut to 240 (``health_message``)."""
    condition = {"type": "Ready", "status": "False", "reason": "Failed", "message": _pad(240 - offset) + value}
    return _instance(_gizmo(status={"conditions": [condition]}))


def warning_message(value: str, offset: int, *, pad: Callable[[int], str] = _pad) -> str:
    """A Warning Event's message, raw: cut to 240 (``warning_message``)."""
    warning = Warning(reason="BackOff", message=pad(240 - offset) + value, at="2026-01-01T00:00:00Z", event="shop/e")
    return _instance(_gizmo(), warning=warning)


def warning_reason(value: str, offset: int) -> str:
    """A Warning Event's reason, raw: a word, cut to 64 (``warning_reason``)."""
    reason = ("Back-off-" * 8)[: 64 - offset - 1] + "-" + value  # a reason is one word (or a few)
    warning = Warning(reason=reason, message="m", at="2026-01-01T00:00:00Z", event="shop/e")
    return _instance(_gizmo(), warning=warning)


def address(value: str, offset: int) -> str:
    """An env value read for addresses up to 2048 characters (``calls`` references)."""
    env = [{"name": "UPSTREAM_URL", "value": _pad(2048 - offset - 7) + "http://" + value + ":8080/x"}]
    pod = {"containers": [{"name": "app", "image": "nginx:1.27", "env": env}]}
    return _instance(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop", "uid": "u"}, "spec": pod},
        plural="pods",
    )


def probe_program(value: str, offset: int) -> str:
    """An exec probe's program, by name, cut to 60 characters."""
    probe = {"exec": {"command": ["/bin/" + "x" * (60 - offset - 1) + "-" + value, "--check"]}}
    pod = {"containers": [{"name": "app", "image": "nginx:1.27", "livenessProbe": probe}]}
    return _instance(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop", "uid": "u"}, "spec": pod},
        plural="pods",
    )


def _crd(*, description: str, field: str = "How big.") -> dict[str, Any]:
    schema = {
        "type": "object",
        "description": description,
        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "string", "description": field}}}},
    }
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.com"},
        "spec": {"group": "example.com", "names": {"kind": "Gizmo", "plural": "gizmos"}, "versions": [version]},
    }


def _capability(crd: dict[str, Any]) -> str:
    document = describe_crd(crd, cluster="c").to_document()
    return _dumped(document.text, document.metadata)


def crd_description(value: str, offset: int) -> str:
    """A CRD's description: 4,000 characters in the payload."""
    return _capability(_crd(description=_pad(4000 - offset) + value))


def crd_sentences(value: str, offset: int) -> str:
    """A CRD's description in the text (its first 70 words), a field's (its first 16): cut by words.

    The text only, for the type's description: the payload holds it whole (:func:`crd_description`)."""
    words = " ".join(["word"] * 69)
    text = describe_crd(_crd(description=" ".join(["word"] * (70 - offset)) + " " + value), cluster="c").text
    return _dumped(text, _capability(_crd(description=words, field=" ".join(["word"] * (16 - offset)) + " " + value)))


def _record(before: str, after: str) -> str:
    head = "Gizmo g | namespace: shop | apiVersion: example.com/v1"
    record = change_record(
        object_id="c/shop/example.com/v1/Gizmo/g",
        before=Stored(text=f"{head} | {before}", metadata={}),
        after=Stored(text=f"{head} | {after}", metadata={}),
        at=1_790_000_000,
    )
    assert record is not None
    return _dumped(record.text, record.metadata)


def record_value(value: str, offset: int) -> str:
    """A field's values cut to 80 in a change record's line; the stored text is an older gate's (not judged)."""
    return _record("endpoint: old.example.com", "endpoint: " + _pad(77 - offset) + value)


def record_digest(value: str, offset: int) -> str:
    """An image's digest cut to 19 characters (``image repo sha256:0123456789ab -> ...``)."""
    return _record("images: ghcr.io/acme/api:1.0", "images: ghcr.io/acme/api@" + "s" * (19 - offset - 1) + ":" + value)


def record_line(value: str, offset: int) -> str:
    """A change record's line cut to 600: twelve-character fields, then the value (at most 80)."""
    fields = (567 - offset) // 12 - 1
    pad = 567 - offset - 12 * fields
    old = " | ".join(f"f{i:02d}: a" for i in range(fields))
    new = " | ".join(f"f{i:02d}: b" for i in range(fields))
    return _record(old, f"{new} | note: {'n' * (pad - 1)} {value}"[: len(new) + 3 + 6 + 80])


def _clipped(message: str) -> str:
    """A log line as the controller's handlers write it (through :class:`ClipFilter`)."""
    record = logging.LogRecord("kubevec", logging.WARNING, __file__, 1, "%s", (message,), None)
    ClipFilter().filter(record)
    return record.getMessage()


def log_line(value: str, offset: int) -> str:
    """Any log line: judged, then cut to 2,000 characters."""
    return _clipped(_pad(2000 - offset) + value)


def skip_report(value: str, offset: int) -> str:
    """An object that failed to build for an unforeseen reason: the error's first 200 characters, logged."""
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(_clipped(record.getMessage()))  # type: ignore[method-assign]
    logger = logging.getLogger("kubevec.controller.sync.documents")
    logger.addHandler(handler)
    try:
        builder = DocumentBuilder(cluster="c", metrics=Metrics())
        builder._report("gizmos/shop/g", ValueError(_pad(200 - offset) + value))
    finally:
        logger.removeHandler(handler)
    assert lines
    return _dumped(*lines)


def gate_string(value: str, offset: int) -> str:
    """The gate's own cut of a string past 32 KiB: judged with what follows the cut, then cut."""
    return redact_text(_pad(MAX_STRING_CHARS - offset) + value + " " + _pad(40_000))


#: Every cut of an object's text in the write path: (module, function) -> its cuts and its case.
CUTS: Final[dict[tuple[str, str], Site]] = {
    ("inference/instances/summary.py", "short"): Site(cuts=1, build=annotation),
    ("inference/instances/document.py", "_annotations"): Site(cuts=1, build=annotation),
    ("inference/instances/document.py", "_build"): Site(cuts=1, build=llm_note),
    ("inference/instances/generic.py", "_render_scalarish"): Site(cuts=2, build=spec_scalar),
    ("inference/instances/generic.py", "spec_summary"): Site(cuts=1, build=spec_joined),
    ("inference/health.py", "clean_message"): Site(cuts=1, build=warning_message),
    ("inference/health.py", "_cut"): Site(cuts=4, build=status_message),
    ("inference/health.py", "clean_word"): Site(cuts=1, build=warning_reason),
    ("inference/addresses.py", "value_addresses"): Site(cuts=1, build=address),
    ("inference/instances/workloads.py", "_program"): Site(cuts=1, build=probe_program),
    ("inference/capabilities.py", "_describe"): Site(cuts=1, build=crd_description),
    ("inference/capabilities.py", "_field_line"): Site(cuts=1, build=crd_sentences, words=True),
    ("inference/capabilities.py", "_text"): Site(cuts=1, build=crd_sentences, words=True),
    ("inference/change_records.py", "_describe"): Site(cuts=2, build=record_value),
    ("inference/change_records.py", "_short"): Site(cuts=1, build=record_value),
    ("inference/change_records.py", "_tag"): Site(cuts=1, build=record_digest, fits=False),
    ("inference/change_records.py", "change_record"): Site(cuts=1, build=record_line),
    ("controller/runtime/logs.py", "ClipFilter.filter"): Site(cuts=1, build=log_line),
    ("controller/sync/documents.py", "DocumentBuilder._report"): Site(cuts=1, build=skip_report),
    ("inference/redaction/gate.py", "_judged_then_cut"): Site(cuts=3, build=gate_string),
}
#: Slices the walk finds that cut no object's text, and why.
NOT_TEXT: Final[dict[tuple[str, str], tuple[int, str]]] = {
    ("inference/redaction/gate.py", "_judged"): (1, "a test of a value's first character ({ or [)"),
    ("inference/redaction/gate.py", "_redact_structured"): (1, "a test of a value's first character ({ or [)"),
    ("inference/change_records.py", "change_record"): (2, "a content hash's first 12 hex digits (the record id)"),
    ("inference/warnings.py", "Warning.digest"): (1, "a hash's first 12 hex digits"),
    ("controller/sync/documents.py", "builder_fingerprint"): (1, "a hash's first 12 hex digits"),
    ("controller/sync/documents.py", "DocumentBuilder._instance_key"): (1, "a hash's first 12 hex digits"),
    ("controller/sync/documents.py", "DocumentBuilder.builtin_key"): (1, "a hash's first 12 hex digits"),
    ("inference/capabilities.py", "_deprecated"): (1, "a test on a description's first 80 characters: nothing kept"),
    ("inference/instances/generic.py", "spec_summary"): (1, "the list of one path's values (each whole)"),
    ("inference/instances/config.py", "_keys_only"): (1, "a list of a Secret's or ConfigMap's key names"),
    ("controller/sync/status.py", "status_record"): (1, "the last 20 skipped objects (a list)"),
    ("inference/references.py", "_walk"): (2, "a field name's known suffix (Ref, Refs) taken off after endswith"),
    ("inference/references.py", "_kind_of"): (
        3,
        "a field name's words capitalised and glued (configMapRef: ConfigMap)",
    ),
}


def _fixed(node: ast.expr | None) -> bool:
    """A bound written in the code: a constant, a name, an attribute, or arithmetic of them."""
    if isinstance(node, ast.Constant | ast.Name | ast.Attribute):
        return True
    if isinstance(node, ast.UnaryOp):
        return _fixed(node.operand)
    if isinstance(node, ast.BinOp):
        return _fixed(node.left) and _fixed(node.right)
    return False


_SEQUENCE_CALLS: Final = frozenset({"sorted", "list", "tuple", "set", "fromkeys", "split", "rsplit", "items", "values"})


class _Walk(ast.NodeVisitor):
    """Slices of text with a fixed bound, and calls of :data:`CUTTERS`, per function.

    A slice of items is no cut of text: its value is a list by its syntax (a literal, a comprehension,
    ``sorted(...)``, ``.split(...)``, a slice of one), by a call of a function of the module annotated to
    return one, or by a name the function binds to one, annotates as one or tests with ``isinstance``.
    """

    def __init__(self, module: str, tree: ast.Module) -> None:
        self.module = module
        self.found: dict[tuple[str, str], int] = {}
        self._where: list[str] = []
        self._sequences: list[set[str]] = [set()]
        self._returns_sequence = {
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and node.returns is not None and _is_sequence(node.returns)
        }

    def _count(self) -> None:
        key = (self.module, ".".join(self._where) or "<module>")
        self.found[key] = self.found.get(key, 0) + 1

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._where.append(node.name)
        self.generic_visit(node)
        self._where.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._where.append(node.name)
        self._sequences.append(self._sequence_names(node))
        self.generic_visit(node)
        self._sequences.pop()
        self._where.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Subscript(self, node: ast.Subscript) -> None:
        cut = node.slice
        if isinstance(cut, ast.Slice) and (_fixed(cut.lower) or _fixed(cut.upper)) and not self._items(node.value):
            self._count()
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        glued = isinstance(node.func, ast.Attribute) and node.func.attr == "join" and _is_empty(node.func.value)
        if _called(node) in CUTTERS or glued:  # "".join puts parts together with nothing between them
            self._count()
        self.generic_visit(node)

    def _items(self, node: ast.expr) -> bool:
        if isinstance(node, ast.List | ast.ListComp | ast.Tuple | ast.GeneratorExp | ast.Set | ast.SetComp):
            return True
        if isinstance(node, ast.Call):
            return _called(node) in _SEQUENCE_CALLS or _called(node) in self._returns_sequence
        if isinstance(node, ast.BoolOp):
            return any(self._items(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self._items(node.body) or self._items(node.orelse)
        if isinstance(node, ast.Subscript):
            return isinstance(node.slice, ast.Slice) and self._items(node.value)
        return isinstance(node, ast.Name) and node.id in self._sequences[-1]

    def _sequence_names(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
        names = {a.arg for a in [*function.args.args, *function.args.kwonlyargs] if _is_sequence(a.annotation)}
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and _called(node) == "isinstance" and len(node.args) == 2:
                subject, types = node.args
                if isinstance(subject, ast.Name) and any(t in ast.unparse(types) for t in ("list", "tuple")):
                    names.add(subject.id)
        self._sequences.append(names)
        for _ in range(3):  # names bound to names bound to lists
            for node in ast.walk(function):
                if isinstance(node, ast.Assign) and self._items(node.value):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
                elif (
                    isinstance(node, ast.AnnAssign)
                    and isinstance(node.target, ast.Name)
                    and (_is_sequence(node.annotation) or (node.value is not None and self._items(node.value)))
                ):
                    names.add(node.target.id)
        self._sequences.pop()
        return names


def _is_empty(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == ""


def _called(node: ast.Call) -> str | None:
    return node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)


def _is_sequence(annotation: ast.expr | None) -> bool:
    return annotation is not None and ast.unparse(annotation).startswith(("list", "tuple", "Sequence"))


def walk_cuts() -> dict[tuple[str, str], int]:
    found: dict[tuple[str, str], int] = {}
    for path in MODULES:
        tree = ast.parse(path.read_text())
        walk = _Walk(str(path.relative_to(ROOT)), tree)
        walk.visit(tree)
        found.update(walk.found)
    return found


def test_every_cut_is_registered() -> None:
    registered: dict[tuple[str, str], int] = {key: site.cuts for key, site in CUTS.items()}
    for key, (count, _) in NOT_TEXT.items():
        registered[key] = registered.get(key, 0) + count
    assert walk_cuts() == registered


def test_the_walk_finds_a_new_cut() -> None:
    source = (
        "def f(value: str, names: list[str]) -> str:\n"
        "    return value[:MAX] + ', '.join(names[:3]) + short(value) + ''.join(names)\n"
    )
    walk = _Walk("m.py", ast.parse(source))
    walk.visit(ast.parse(source))
    assert walk.found == {("m.py", "f"): 3}


def _leaks(secret: str, text: str) -> list[str]:
    return [secret[i : i + 6] for i in range(len(secret) - 5) if secret[i : i + 6] in text]


def _cases() -> Iterator[tuple[str, Site]]:
    for (module, function), site in sorted(CUTS.items()):
        yield f"{module}:{function}", site


@pytest.mark.parametrize(("where", "site"), list(_cases()), ids=[w for w, _ in _cases()])
def test_no_part_of_a_secret_survives_a_cut(where: str, site: Site) -> None:
    for shown, secret in SECRETS:
        for offset in OFFSETS if not site.words else (1, 2, 3):
            out = site.build(shown, offset)
            assert not _leaks(secret, out), f"{where}: {secret} at {offset} before the cut: {out}"


@pytest.mark.parametrize(("where", "site"), list(_cases()), ids=[w for w, _ in _cases()])
def test_each_case_reaches_its_cut(where: str, site: Site) -> None:
    """A harmless word at the cut is cut (or dropped whole), and kept whole well before it."""
    near, far = (0, 4) if site.words else (4, len(MARKER) + 12)
    assert MARKER not in site.build(MARKER, near), where
    assert MARKER in site.build(MARKER, far) or not site.fits, where


def test_a_warning_padded_with_whitespace_is_judged_whole() -> None:
    """Regression: a message was cut at 960 characters, then its whitespace collapsed, then judged: a token
    past the cut came out as ``ghp_A1b2C3d4E5f`` at the start of the line."""
    for offset in OFFSETS:
        out = warning_message(TOKEN, offset, pad=lambda n: " " * (n + 720))
        assert not _leaks(TOKEN, out), out


def test_a_log_line_shortened_by_the_gate_shows_nothing_past_its_old_cut() -> None:
    """Regression: a log message was cut at 4,000 characters, then judged, then cut to 2,000: a generated
    blob the gate replaced by ``<redacted>`` pulled the prefix of a token cut at 4,000 into the line."""
    blob = "".join(f"{i:x}Zq{i * 7919 % 65536:x}" for i in range(1200))[:3000]  # random-looking: redacted
    for offset in OFFSETS:
        out = _clipped(blob + " " + _pad(4000 - len(blob) - 1 - offset) + TOKEN)
        assert "<redacted>" in out
        assert not _leaks(TOKEN, out), out
