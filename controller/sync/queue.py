"""The engine's queue: what waits to be written, one entry per document, the last state winning.

Keyed by (collection, document id), so a burst of events for one object costs one write; a delete
is an entry too. Entries keep the order of intake (a replaced entry moves to the back), each with
its place in that order (``seq``), which is what :meth:`WriteQueue.wait_written` waits for. A batch
taken for writing is *in flight*: as good as queued for the resync's decisions, and put back in
front if its write fails (unless a newer state arrived meanwhile).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from opentelemetry.trace import SpanContext

from kubevec.controller.runtime.metrics import Metrics
from kubevec.inference.documents import Collection, Document

Key = tuple[Collection, str]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Pending:
    collection: Collection
    id: str
    document: Document | None  # None: delete
    received: float  # monotonic time the triggering event arrived
    trace: SpanContext | None = None  # the event's span, linked from the flush that writes it
    #: Its place in the order of intake (set by the queue): what :meth:`WriteQueue.wait_written` waits for.
    seq: int = 0


class WriteQueue:
    """Pending writes in order of intake, and the events the flush loop and its waiters meet on."""

    def __init__(self, *, metrics: Metrics) -> None:
        self._metrics = metrics
        self._items: OrderedDict[Key, Pending] = OrderedDict()
        #: Taken from the queue, being written now.
        self._inflight: set[Key] = set()
        self._seq = 0  # the last place in the order of intake given out
        self._written_seq = 0  # every item up to this place has been written (or replaced by a later one)
        #: Set by every put (and by whoever wants the flush loop to look again).
        self.wakeup = asyncio.Event()
        #: Set when the flush loop found nothing left to write.
        self.idle = asyncio.Event()
        self.idle.set()
        #: Set after each batch, written or not: what :meth:`wait_written` and the resync's room wait for.
        self.written = asyncio.Event()

    # -- reading -----------------------------------------------------------------------------------

    @property
    def view(self) -> Mapping[Key, Pending]:
        """What waits, oldest first (a read-only view)."""
        return MappingProxyType(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def busy(self) -> bool:
        """Anything queued or being written."""
        return bool(self._items or self._inflight)

    def oldest(self) -> Pending:
        return next(iter(self._items.values()))

    def pending(self, collection: Collection, document_id: str) -> bool:
        """Queued or being written: a newer state than any snapshot is on its way."""
        key = (collection, document_id)
        return key in self._items or key in self._inflight

    # -- intake ------------------------------------------------------------------------------------

    def put(self, item: Pending) -> None:
        key = (item.collection, item.id)
        self._seq += 1
        item = dataclasses.replace(item, seq=self._seq)
        self._items.pop(key, None)  # last state wins, and moves to the back (the queue stays in seq order)
        self._items[key] = item
        self._depth()
        self.idle.clear()
        self.wakeup.set()

    def drop(self, unwanted: Callable[[Pending], bool]) -> None:
        """Forget every queued entry ``unwanted`` picks (a purge deletes them in the store itself)."""
        for key in [k for k, p in self._items.items() if unwanted(p)]:
            del self._items[key]
        self._depth()

    # -- writing -----------------------------------------------------------------------------------

    def take(self, size: int) -> list[Pending]:
        """The oldest ``size`` entries, now in flight until :meth:`settled`."""
        batch = [self._items.popitem(last=False)[1] for _ in range(min(size, len(self._items)))]
        self._inflight = {(item.collection, item.id) for item in batch}
        self._depth()
        return batch

    def wrote(self, batch: Iterable[Pending]) -> None:
        """``batch`` is in the store: what waited before it is written."""
        self._written_seq = max(self._written_seq, *(item.seq for item in batch))
        if not self._items:
            self._written_seq = self._seq  # nothing left: everything given out is written

    def requeue(self, batch: Iterable[Pending]) -> None:
        """Put a batch that was not written back in front, unless a newer state arrived meanwhile."""
        for item in reversed(list(batch)):
            key = (item.collection, item.id)
            if key not in self._items:  # a newer state arrived meanwhile: it wins
                self._items[key] = item
                self._items.move_to_end(key, last=False)
        self._depth()

    def settled(self) -> None:
        """The batch in flight was written or put back."""
        self._inflight = set()
        self.written.set()

    # -- waiting -----------------------------------------------------------------------------------

    async def wait_written(self) -> None:
        """Until everything queued before this call is written (what came after may still wait)."""
        target = self._seq
        while self._written_seq < target and self.busy:
            self.written.clear()
            self.wakeup.set()
            await self.written.wait()

    async def wait_room(self, *, window: int, waiting: Callable[[], bool]) -> None:
        """While more than ``window`` entries wait and ``waiting()`` says a writer will take them."""
        while waiting() and len(self._items) > window:
            self.written.clear()
            self.wakeup.set()  # a full batch is there: no debounce to wait out
            await self.written.wait()

    def _depth(self) -> None:
        self._metrics.queue_depth.set(len(self._items))
