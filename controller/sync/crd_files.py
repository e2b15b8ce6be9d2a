"""``kubevec index crds``: CRD files -> capability documents -> the configured store, no cluster needed."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from kubevec.backends import VectorStore
from kubevec.controller.sync.shared_records import CapabilityWriter
from kubevec.inference.capabilities import describe_crd_files
from kubevec.inference.documents import INDEXED_FIELDS
from kubevec.inference.providers.embedders.base import Embedder


@dataclasses.dataclass
class IndexReport:
    files: int = 0
    documents: int = 0
    embedded: int = 0
    unchanged: int = 0
    errors: list[str] = dataclasses.field(default_factory=list)


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
    """
    found = describe_crd_files(paths, cluster=cluster)
    report = IndexReport(files=found.files, errors=found.errors)
    documents = found.documents
    await store.ensure_collection(
        collection, dimension=embedder.dimension, embedder=embedder.name, indexed=INDEXED_FIELDS
    )
    writer = CapabilityWriter(store=store, collection=collection, embedder=embedder, cluster=cluster)
    stored = await writer.snapshot()
    changed = [d for d in documents if (s := stored.get(d.id)) is None or s.content_hash != d.content_hash]
    report.documents = len(documents)
    report.unchanged = len(documents) - len(changed)
    started = time.monotonic()
    done = 0
    for start in range(0, len(changed), batch_size):
        batch = changed[start : start + batch_size]
        written = await writer.write(upserts=batch, deletes=())
        report.embedded += written.embedded
        report.unchanged += written.skipped
        done += len(batch)
        if progress is not None:
            _bar(progress, done=done, total=len(changed), started=started)
    if progress is not None and changed and _redrawn(progress):
        progress.write("\n")
    return report


def _redrawn(out: TextIO) -> bool:
    """A terminal gets one line redrawn; a log (CI, a pipe) gets whole lines."""
    return bool(getattr(out, "isatty", lambda: False)())


def _bar(out: TextIO, *, done: int, total: int, started: float) -> None:
    width = 30
    filled = int(width * done / max(total, 1))
    rate = done / max(time.monotonic() - started, 1e-6)
    line = f"Indexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total} documents ({rate:.0f}/s)"
    out.write(f"\r{line}" if _redrawn(out) else f"{line}\n")
    out.flush()
