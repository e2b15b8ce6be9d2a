"""What one batch needs, decided from the hashes known to be stored alone: no store read, no embedding.

- same content hash: nothing to do;
- same text hash (only metadata changed): the stored vector is fetched and re-used, nothing is
  embedded;
- otherwise the text is embedded (one batched call per flush, see ``writer.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from kubevec.backends import StoredHashes
from kubevec.inference.documents import Document


@dataclasses.dataclass(frozen=True, kw_only=True)
class WritePlan:
    """What one batch needs (see :func:`plan`)."""

    skipped: int  # same content hash: nothing to write
    reuse: list[Document]  # same text (or a stored record without a text hash): fetch its vector
    embed: list[Document]  # new, or the text changed

    @property
    def written(self) -> list[Document]:
        """What the plan writes: the documents to embed, then those re-using a vector."""
        return [*self.embed, *self.reuse]


def plan(known: Mapping[str, StoredHashes], documents: Iterable[Document]) -> WritePlan:
    """Sort ``documents`` by what they need, from ``known`` (id -> stored hashes) alone."""
    skipped = 0
    reuse: list[Document] = []
    embed: list[Document] = []
    for document in documents:
        stored = known.get(document.id)
        if stored is None:
            embed.append(document)
        elif stored.content_hash == document.content_hash:
            skipped += 1
        elif stored.text_hash in (document.text_hash, ""):  # "": stored before text hashes; the writer checks the text
            reuse.append(document)
        else:
            embed.append(document)
    return WritePlan(skipped=skipped, reuse=reuse, embed=embed)
