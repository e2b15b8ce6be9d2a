"""One collection's keyword (BM25) index on disk, kept by tantivy and shared by every reader of a machine.

tantivy (the Rust search library behind Quickwit, through its official Python bindings) keeps the
index as immutable segments in a directory: it is built once, updated in place by deleting and adding
the documents a write touched, memory-mapped rather than loaded (a reader of 100,000 documents holds
a few MiB of it, not the ~250 MiB a matrix in Python took), and opened by a new process in
milliseconds. Processes share one directory: one of them at a time holds tantivy's writer lock to
update it, the others reload and read. Beside the segments, ``state.json`` says which write of the
store the index is at (the collection's stamp, and how far into its journal: backends/journal.py).

Words are cut as bm25s cut them (``\\b\\w\\w+\\b``, lower-cased, Lucene's 33 English stopwords), so
the ranking the hybrid search was tuned with stays the same words; the query goes through the same
analyzer as the documents. The scores are BM25 with bm25s's saturation too (:data:`K1`): tantivy
fixes k1 at 1.2, so its best candidates are scored again from its own explanation of each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

logger = logging.getLogger(__name__)

STATE_FILE: Final = "state.json"
#: Bump when the schema or the analyzer changes: an index of another version is built again.
VERSION: Final = 3
ANALYZER: Final = "kubevec_words"
#: Memory the writer may buffer before it flushes a segment (tantivy's floor is 15 MB).
WRITER_HEAP: Final = 32_000_000
#: BM25's term saturation: bm25s's default, which the hybrid ranking was built and measured with.
#: tantivy fixes it at 1.2 (Lucene's); at 1.2 the capability bench (118 public CRDs, 88 questions)
#: answers 3 fewer questions first (recall@1 0.568 -> 0.534); the instance bench is the same at both.
K1: Final = 1.5
#: BM25's length normalisation (tantivy's and bm25s's alike).
B: Final = 0.75


@functools.cache
def _tantivy() -> Any:
    """tantivy on first use: a controller that serves no queries never loads it."""
    import tantivy

    return tantivy


@dataclasses.dataclass
class State:
    """Where the index is in the store's writes."""

    #: The collection's write stamp the index holds every write up to (None: unknown, build again).
    stamp: str | None = None
    #: Newest journal time applied, and the entries applied at or after it less the slack.
    watermark: float = 0.0
    applied: dict[str, float] = dataclasses.field(default_factory=dict)
    #: Wall-clock time of the last catch-up: a journal older than its retention cannot be trusted.
    caught_up: float = 0.0
    version: int = VERSION

    @classmethod
    def read(cls, path: Path) -> State | None:
        try:
            data = json.loads((path / STATE_FILE).read_text())
            state = cls(
                stamp=data.get("stamp"),
                watermark=float(data["watermark"]),
                applied={str(k): float(v) for k, v in data.get("applied", {}).items()},
                caught_up=float(data["caught_up"]),
                version=int(data["version"]),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return state if state.version == VERSION else None

    def write(self, path: Path) -> None:
        """Replace the file whole: a reader never reads half a state."""
        fd, staging = tempfile.mkstemp(prefix=".state-", dir=path)
        with os.fdopen(fd, "w") as out:
            json.dump(dataclasses.asdict(self), out)
        os.replace(staging, path / STATE_FILE)


def _analyzer() -> Any:
    tantivy = _tantivy()
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\b\w\w+\b"))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .build()
    )


def _schema() -> Any:
    builder = _tantivy().SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False, tokenizer_name=ANALYZER)
    builder.add_text_field("name", stored=False, tokenizer_name="raw")
    #: The body's length in words, exact (tantivy's own is rounded to a byte for lengths past 40).
    builder.add_integer_field("length", stored=True)
    return builder.build()


def bm25(explanation: str, fallback: float, length: float | None = None) -> float:
    """A document's BM25 score with :data:`K1`, from tantivy's explanation of its score (JSON: per term,
    its idf and its frequency, the field's length and the average length); ``length``: the body's exact
    length, where known (tantivy explains with its rounded one); ``fallback`` (tantivy's own score) when
    the explanation does not say them."""
    try:
        terms = list(_term_factors(json.loads(explanation)))
    except (ValueError, KeyError, TypeError, StopIteration):
        return fallback
    if not terms:
        return fallback
    return sum(
        idf * (K1 + 1) * freq / (freq + K1 * (1 - B + B * (length or dl) / average)) for idf, freq, dl, average in terms
    )


def _term_factors(node: dict[str, Any]) -> Iterable[tuple[float, float, float, float]]:
    """``(idf, freq, dl, avgdl)`` of each term an explanation node sums."""
    description = str(node.get("description", ""))
    details = node.get("details") or []
    if description.startswith("TermQuery"):
        values = {str(d["description"]).split(",")[0]: d for d in details}
        idf = float(values["idf"]["value"])
        saturation = next(d for d in details if str(d["description"]).startswith("freq /"))
        parts = {str(d["description"]).split(",")[0]: float(d["value"]) for d in saturation["details"]}
        yield idf, parts["freq"], parts["dl"], parts["avgdl"]
        return
    for child in details:
        yield from _term_factors(child)


def name_of(document_id: str) -> str:
    """The last part of a document's id: an instance's object name (``cluster/ns/group/version/kind/name``)."""
    return document_id.rsplit("/", 1)[-1]


class WriterBusy(Exception):
    """Another process holds the index's writer lock; it is bringing the index up to date."""


class KeywordIndex:
    """A tantivy index of ``(id, text)`` in ``path`` (a directory), or in memory when ``path`` is None."""

    def __init__(self, *, path: Path | None) -> None:
        tantivy = _tantivy()
        self.path = path
        self._analyzer = _analyzer()
        if path is None:
            self._index = tantivy.Index(_schema())
        else:
            path.mkdir(parents=True, exist_ok=True)
            self._index = tantivy.Index(_schema(), path=str(path), reuse=True)
        self._index.register_tokenizer(ANALYZER, self._analyzer)
        self.state = (State.read(path) if path is not None else None) or State()
        self._searcher = self._index.searcher()

    @classmethod
    def open(cls, *, path: Path | None) -> KeywordIndex:
        """Open the index at ``path``; one of another version, or damaged, is removed and started empty."""
        if path is None:
            return cls(path=None)
        if path.exists() and State.read(path) is None:
            shutil.rmtree(path, ignore_errors=True)
        try:
            return cls(path=path)
        except ValueError as exc:  # tantivy: unreadable meta.json or segments
            logger.warning("Starting a damaged keyword index again path=%s error=%s", path, exc)
            shutil.rmtree(path, ignore_errors=True)
            return cls(path=path)

    @property
    def size(self) -> int:
        return int(self._searcher.num_docs)

    def reread(self) -> None:
        """See what another process committed (segments and state)."""
        if self.path is not None:
            self.state = State.read(self.path) or State()
        self._index.reload()
        self._searcher = self._index.searcher()

    def document(self, document_id: str, text: str) -> Any:
        """What the index holds of a record: its words, its name, and its exact length in words."""
        length = len(self._analyzer.analyze(text))
        return _tantivy().Document(id=document_id, body=text, name=name_of(document_id), length=length)

    def search(self, text: str, *, k: int) -> list[tuple[str, float]]:
        """The best ``k`` ``(id, BM25 score)`` for ``text``, best first: tantivy's best ``k`` scored again
        with :data:`K1` (k1 reorders neighbours, it does not lift a document from past the ``k`` asked: the
        capability bench is the same with 2 or 10 times as many; an explanation costs ~25 us)."""
        tantivy = _tantivy()
        words = list(self._analyzer.analyze(text))  # a word asked twice counts twice, as bm25s counted it
        if not words or k <= 0:
            return []
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._index.schema, "body", word)) for word in words]
        )
        found = self._searcher.search(query, k)
        scored = []
        for score, address in found.hits:
            stored = self._searcher.doc(address)
            lengths = stored["length"]
            exact = float(lengths[0]) if lengths else None
            scored.append((str(stored["id"][0]), bm25(query.explain(self._searcher, address).to_json(), score, exact)))
        scored.sort(key=lambda pair: (-pair[1], pair[0]))  # equals by id: the same order however segmented
        return scored[:k]

    def named(self, names: Sequence[str], *, limit: int) -> list[str]:
        """Ids of up to ``limit`` documents whose :func:`name_of` is one of ``names`` (a term lookup: what a
        filter on the name costs a store that scans its metadata, as Chroma does, ~100 ms at 100,000)."""
        tantivy = _tantivy()
        if not names or limit <= 0:
            return []
        query = tantivy.Query.term_set_query(self._index.schema, "name", list(names))
        found = self._searcher.search(query, limit)
        return [str(self._searcher.doc(address)["id"][0]) for _, address in found.hits]

    def ids(self) -> set[str]:
        """Every id indexed (reads every stored id: for the rare check of members after a delete by filter)."""
        tantivy = _tantivy()
        total = self.size
        if total == 0:
            return set()
        found = self._searcher.search(tantivy.Query.all_query(), total)
        return {str(self._searcher.doc(address)["id"][0]) for _, address in found.hits}

    def rewrite(self, pairs: Iterable[tuple[str, str]], *, state: State) -> None:
        """Replace every document with ``pairs`` and record ``state``."""
        rewriting = self.rewriting()
        rewriting.add(pairs)
        rewriting.commit(state)

    def rewriting(self) -> Rewriting:
        """Replace every document, page by page (a build never holds the collection's texts at once)."""
        return Rewriting(self)

    def apply(self, *, upserted: Sequence[tuple[str, str]], removed: Iterable[str], state: State) -> None:
        """Remove ``removed`` and each upserted id, add ``upserted``, and record ``state``."""
        with self._writer() as writer:
            for document_id in {*removed, *(i for i, _ in upserted)}:
                writer.delete_documents_by_term("id", document_id)
            for document_id, text in upserted:
                writer.add_document(self.document(document_id, text))
        self._committed(state)

    @contextlib.contextmanager
    def _writer(self) -> Any:
        try:
            writer = self._index.writer(heap_size=WRITER_HEAP, num_threads=1)
        except ValueError as exc:
            if "lock" in str(exc).lower():
                raise WriterBusy(str(exc)) from exc
            raise
        try:
            yield writer
        except BaseException:
            writer.rollback()
            raise
        writer.commit()
        writer.wait_merging_threads()  # releases the lock; merges end before another process writes

    def _committed(self, state: State) -> None:
        state.caught_up = time.time()
        if self.path is not None:
            state.write(self.path)
        self.state = state
        self._index.reload()
        self._searcher = self._index.searcher()


class Rewriting:
    """A build in progress: holds the writer (and so the lock) until :meth:`commit` or :meth:`abandon`.

    Each step runs in a worker thread, one at a time: a build cancelled while a page is being added
    (a reader that stops) rolls back once that page is in, not beside it (tantivy's writer refuses
    two callers at once: "Already borrowed")."""

    def __init__(self, index: KeywordIndex) -> None:
        self._index = index
        self._steps = threading.Lock()
        self._context = index._writer()
        self._writer: Any = self._context.__enter__()
        self._writer.delete_all_documents()

    def add(self, pairs: Iterable[tuple[str, str]]) -> None:
        with self._steps:
            if self._writer is None:
                return  # abandoned meanwhile
            for document_id, text in pairs:
                self._writer.add_document(self._index.document(document_id, text))

    def commit(self, state: State) -> None:
        with self._steps:
            self._writer = None
            self._context.__exit__(None, None, None)
            self._index._committed(state)

    def abandon(self, error: BaseException) -> None:
        """Roll back: the index stays as it was (and the lock is let go with the writer)."""
        with self._steps:
            if self._writer is None:
                return
            self._writer = None
            self._context.__exit__(type(error), error, error.__traceback__)
