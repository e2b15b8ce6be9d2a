"""``kubevec index crds``: CRD files -> capability documents -> the configured store, no cluster needed.

Run again over the same folder (2,000 Crossplane CRDs, 242 MB), reading and describing every file
only to learn that nothing changed took 82 s. So each document says what it was built from, as the
controller's do (``built_from``): ``file:<sha256 of the file>/<CRDs in it>/<builder version>``. A file
whose every CRD the store holds built from exactly that is skipped without parsing it; a changed
file, one whose record is missing (deleted, or a CRD that failed to describe) or one built by
another builder is read and described again. Hashing the files costs a second or so for 242 MB.

A removed file's records stay (``index crds`` adds and updates, it never deletes). Two files defining
the same CRD: the later one (in the order files are read) is indexed, on every run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from kubevec.backends import StoredHashes, VectorStore
from kubevec.controller.sync.documents import builder_fingerprint
from kubevec.controller.sync.shared_records import CapabilityWriter
from kubevec.core.errors import InferenceError
from kubevec.core.version import kubevec_version
from kubevec.inference import capabilities, manifests
from kubevec.inference.documents import INDEXED_FIELDS, SCHEMA_VERSION, Document, with_built_from
from kubevec.inference.providers.embedders.base import Embedder

#: How ``built_from`` of a document built from a file starts (the controller's start with a uid).
FILE_KEY: str = "file:"


@dataclasses.dataclass
class IndexReport:
    files: int = 0
    #: Files read and described; the others were skipped unread (the store holds what they build).
    parsed: int = 0
    documents: int = 0
    embedded: int = 0
    unchanged: int = 0
    errors: list[str] = dataclasses.field(default_factory=list)


def builder_version() -> str:
    """What a stored document must have been built by to be kept: the controller's own three parts."""
    return f"{SCHEMA_VERSION}/{kubevec_version()}/{builder_fingerprint()}"


@dataclasses.dataclass(frozen=True)
class _Built:
    """The CRDs the store says one file (by content) built, with this builder."""

    crds: int  # how many CRDs the file held when it was built
    resources: tuple[str, ...]  # the stored parts built from it

    @property
    def complete(self) -> bool:
        return len(self.resources) == self.crds


def _built_by_file(stored: Mapping[str, StoredHashes], *, version: str) -> dict[str, _Built]:
    """sha256 -> what the store holds built from a file with that content (by this builder only)."""
    found: dict[str, tuple[int, list[str]]] = {}
    for resource, hashes in stored.items():
        key = hashes.built_from
        if not key.startswith(FILE_KEY) or not key.endswith(f"/{version}") or not hashes.content_hash:
            continue
        digest, _, count = key[len(FILE_KEY) : -len(version) - 1].partition("/")
        if count.isdigit():
            found.setdefault(f"{digest}/{count}", (int(count), []))[1].append(resource)
    out: dict[str, _Built] = {}
    for both, (crds, resources) in found.items():
        digest = both.partition("/")[0]
        built = _Built(crds, tuple(sorted(resources)))
        if digest not in out or built.complete:  # one content, two counts: only a complete one skips
            out[digest] = built
    return out


def _describe_file(
    path: Path, content: bytes, *, digest: str, cluster: str, version: str, report: IndexReport
) -> list[Document]:
    """The file's capability documents, each saying it was built from this file's content."""
    try:
        found = manifests.load_manifests(content.decode(), source=str(path))
    except (InferenceError, UnicodeDecodeError) as exc:
        report.errors.append(str(exc) if isinstance(exc, InferenceError) else f"{path}: {exc}")
        return []
    crds = [manifest for manifest in found if manifests.is_crd(manifest)]
    built_from = f"{FILE_KEY}{digest}/{len(crds)}/{version}"
    out: list[Document] = []
    for crd in crds:
        try:
            document = capabilities.describe_crd(crd, cluster=cluster).to_document()
        except InferenceError as exc:
            report.errors.append(f"{path}: {exc}")
            continue
        out.append(with_built_from(document, built_from))
    return out


def _read(
    files: Sequence[Path],
    *,
    stored: Mapping[str, StoredHashes],
    cluster: str,
    report: IndexReport,
    progress: TextIO | None,
) -> dict[str, Document | None]:
    """Every CRD found, by id: its new document, or None where an unchanged file built what is stored."""
    version = builder_version()
    built = _built_by_file(stored, version=version)
    out: dict[str, Document | None] = {}
    started = time.monotonic()
    for path in files:
        report.files += 1
        try:
            content = path.read_bytes()
        except OSError as exc:
            report.errors.append(str(exc))
            continue
        digest = hashlib.sha256(content).hexdigest()[:32]
        known = built.get(digest)
        if known is not None and known.complete:
            documents: Iterable[tuple[str, Document | None]] = ((r, None) for r in known.resources)
        else:
            report.parsed += 1
            described = _describe_file(path, content, digest=digest, cluster=cluster, version=version, report=report)
            documents = ((d.id, d) for d in described)
        for document_id, document in documents:
            out[document_id] = document  # the same CRD in a later file wins
        if progress is not None and (report.files % 100 == 0 or report.files == len(files)):
            skipped = report.files - report.parsed
            _bar(
                progress,
                done=report.files,
                total=len(files),
                started=started,
                what=f"files (skipped unchanged {skipped})",
                doing="Reading",
            )
    if progress is not None and files and _redrawn(progress):
        progress.write("\n")
    return out


async def index_crds(
    *,
    paths: Sequence[Path],
    store: VectorStore,
    embedder: Embedder,
    collection: str,
    cluster: str,
    batch_size: int = 32,
    progress: TextIO | None = sys.stderr,
) -> IndexReport:
    """Describe, embed (only what changed) and upsert every CRD found; bad files are reported, not fatal.

    The documents become ``cluster``'s parts of the shared capability records, as the controller's are.
    Files that built what the store holds are not read again (see the module's docstring). Raises
    :class:`InferenceError` when a named path does not exist, before anything is written.
    """
    files = list(manifests.iter_manifest_files(list(paths)))
    await store.ensure_collection(
        collection, dimension=embedder.dimension, embedder=embedder.name, indexed=INDEXED_FIELDS
    )
    writer = CapabilityWriter(store=store, collection=collection, embedder=embedder, cluster=cluster)
    stored = await writer.snapshot()
    report = IndexReport()
    found = _read(files, stored=stored, cluster=cluster, report=report, progress=progress)
    report.documents = len(found)
    changed: list[Document] = []
    for document_id, document in found.items():
        hashes = stored.get(document_id)
        if document is None or (hashes is not None and hashes.content_hash == document.content_hash):
            report.unchanged += 1
        if document is not None and (
            hashes is None or (hashes.content_hash, hashes.built_from) != (document.content_hash, document.built_from)
        ):
            changed.append(document)  # new text or metadata, or the same document from another file or builder
    started = time.monotonic()
    done = 0
    for start in range(0, len(changed), batch_size):
        batch = changed[start : start + batch_size]
        written = await writer.write(upserts=batch, deletes=())
        report.embedded += written.embedded
        done += len(batch)
        if progress is not None:
            _bar(progress, done=done, total=len(changed), started=started, what="documents", doing="Indexing")
    if progress is not None and changed and _redrawn(progress):
        progress.write("\n")
    return report


def _redrawn(out: TextIO) -> bool:
    """A terminal gets one line redrawn; a log (CI, a pipe) gets whole lines."""
    return bool(getattr(out, "isatty", lambda: False)())


def _bar(out: TextIO, *, done: int, total: int, started: float, what: str, doing: str) -> None:
    width = 30
    filled = int(width * done / max(total, 1))
    rate = done / max(time.monotonic() - started, 1e-6)
    line = f"{doing} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {what} ({rate:.0f}/s)"
    out.write(f"\r{line}" if _redrawn(out) else f"{line}\n")
    out.flush()
