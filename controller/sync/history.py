"""What the engine records in the change history (``changelog.py`` writes it), and when.

Each batch of instance writes is recorded before its documents are written, so a failed history
write puts the batch back with nothing written yet. Nothing is recorded while the first sync of an
empty store writes everything: that is an index being built, not a cluster changing. Records
judged by an older gate (builder fingerprint) are judged again after the next resync.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from kubevec.backends import StoredHashes, VectorStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.changelog import ChangeLog
from kubevec.controller.sync.planner import WritePlan
from kubevec.core.clock import Clock
from kubevec.core.errors import BackendError, EmbedderError, InvalidRecord
from kubevec.inference.change_records import ChangeRecord, Stored, change_record

logger = logging.getLogger(__name__)


class HistoryFeed:
    """The engine's side of the change history: whether to record, the records of a batch, retention."""

    def __init__(self, *, log: ChangeLog | None, store: VectorStore, metrics: Metrics, clock: Clock) -> None:
        #: Where each instance change is recorded (None: no history).
        self.log = log
        self._store = store
        self._metrics = metrics
        self._clock = clock
        self._quiet = False
        self._resynced = False
        #: The gate (builder fingerprint) that judged the stored change records (None: unknown), and the
        #: current one: when they differ, the records are judged again after the next resync.
        self.judged_by: str | None = None
        self.gate = ""

    @property
    def recording(self) -> bool:
        return self.log is not None and not self._quiet

    def started(self, *, ours: Iterable[StoredHashes]) -> None:
        """At start-up: quiet until the first sync is written when the store holds none of this cluster's objects."""
        if self.log is not None and not any(True for _ in ours):
            self._quiet = True
            logger.info("Recording no changes until the first sync of this cluster is written collection=changes")

    def resynced(self, *, busy: bool) -> None:
        """A full resync has queued everything: once that is written (``busy`` False), changes are recorded."""
        self._resynced = True
        if not busy:
            self._quiet = False

    def drained(self) -> None:
        """The queue is empty: after a resync, the first sync is written."""
        if self._resynced and self._quiet:
            self._quiet = False
            logger.info("Recording changes from now on collection=changes")

    async def record(
        self, *, name: str, known: Mapping[str, StoredHashes], plan: WritePlan | None, deletes: list[str]
    ) -> None:
        """Record what writing ``plan`` and ``deletes`` to collection ``name`` changes; before writing them."""
        if self.log is None:
            return
        try:
            await self.log.write(await self._changes(name=name, known=known, plan=plan, deletes=deletes))
        except InvalidRecord as exc:  # a contract bug: the documents are written all the same
            self._metrics.errors.labels(stage="history_record").inc()
            logger.error("Dropped invalid change records collection=changes error=%s", exc)

    async def prune(self) -> None:
        """Retention of the change history; a failure is logged (the next resync tries again)."""
        if self.log is None:
            return
        try:
            if self.gate and self.judged_by != self.gate:  # an older gate wrote them
                await self.log.rejudge()
                self.judged_by = self.gate
            await self.log.prune()
        except (BackendError, EmbedderError) as exc:
            logger.warning("Failed to prune the change history error=%s", exc)

    async def _changes(
        self, *, name: str, known: Mapping[str, StoredHashes], plan: WritePlan | None, deletes: list[str]
    ) -> list[ChangeRecord]:
        """One record per object this batch creates, changes (as an agent would see it) or deletes."""
        written = plan.written if plan is not None else []
        replaced = [d.id for d in written if d.id in known] + [i for i in deletes if i in known]
        stored: dict[str, Stored] = {}
        if replaced:
            records = await self._store.get(name, replaced)
            stored = {r.id: Stored(text=r.text, metadata=r.metadata) for r in records}
        now = self._clock.time()
        found = [
            change_record(
                object_id=d.id, before=stored.get(d.id), after=Stored(text=d.text, metadata=d.metadata), at=now
            )
            for d in written
        ]
        found += [change_record(object_id=i, before=stored[i], after=None, at=now) for i in deletes if i in stored]
        return [record for record in found if record is not None]
