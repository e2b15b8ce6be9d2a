"""The naive baseline of ``make bench-scale``: what a controller without kubevec's economy would do.

Per document, as it comes: build it, embed its text alone, upsert it alone. No batching, no
content hash, no record of what a document was built from, so a restart embeds everything again
and a status update is embedded and written like any other change. It lists and builds with
kubevec's own code (``ClusterState``, ``DocumentBuilder``), so the texts are the ones the controller
stores and only the economy differs. It writes to collections of its own (prefix ``naive_``) in
the same Chroma server, never the controller's.
"""

from __future__ import annotations

import asyncio
import json
import queue
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

from kubevec.backends import Record
from kubevec.backends.config import StoreSettings
from kubevec.backends.factory import open_store
from kubevec.controller.kube.client import KubeReader
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.settings import Settings
from kubevec.controller.sync.documents import DocumentBuilder
from kubevec.controller.sync.reconcile import ClusterState
from kubevec.inference.bodies import as_body
from kubevec.inference.documents import COLLECTIONS, INDEXED_FIELDS, Document
from kubevec.inference.instances import InstancePolicy
from kubevec.inference.providers.embedders.local import LocalEmbedder
from tests.controlplane.cluster import ControlPlane

PREFIX = "naive_"


@dataclass
class Work:
    seconds: float
    embeddings: int
    upserts: int


class Naive:
    """One naive controller against ``plane``, writing to the Chroma server at ``store_url``."""

    def __init__(self, plane: ControlPlane, *, store_url: str, cluster: str) -> None:
        self.plane = plane
        self.cluster = cluster
        self.settings = Settings(
            cluster_name=cluster, store=StoreSettings(backend="chroma", url=store_url, collection_prefix=PREFIX)
        )
        self.embedder = LocalEmbedder()
        self.store = open_store(self.settings.store)

    async def _write(self, document: Document) -> None:
        vector = self.embedder.encode([document.text])[0]
        record = Record(id=document.id, vector=vector.tolist(), text=document.text, metadata=document.metadata)
        await self.store.upsert(self.settings.collection(document.collection), [record])

    async def sync(self) -> Work:
        """List the cluster and write every document it implies, one at a time (also the naive restart)."""
        started = time.monotonic()
        for collection in COLLECTIONS:
            await self.store.ensure_collection(
                self.settings.collection(collection),
                dimension=self.embedder.dimension,
                embedder=self.embedder.name,
                indexed=INDEXED_FIELDS,
            )
        kube = KubeReader(kubeconfig=self.plane.kubeconfig)
        metrics = Metrics()
        builder = DocumentBuilder(cluster=self.cluster, metrics=metrics)
        built: list[Document] = []
        try:
            await ClusterState(kube=kube, settings=self.settings, builder=builder, metrics=metrics).desired(
                built.append
            )
        finally:
            kube.close()
        for document in built:
            await self._write(document)
        return Work(seconds=time.monotonic() - started, embeddings=len(built), upserts=len(built))

    def watch(self, paths: list[str]) -> Watcher:
        """Start watching ``paths`` (list paths of one resource each); each event is built, embedded, written."""
        return Watcher(self, paths)

    async def close(self) -> None:
        await self.store.close()


class Watcher:
    """Watch threads feed a queue; :meth:`drain` writes each event's document the naive way."""

    def __init__(self, naive: Naive, paths: list[str]) -> None:
        self.naive = naive
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.builder = DocumentBuilder(cluster=naive.cluster, metrics=Metrics())
        self.context = ssl.create_default_context(cafile=str(naive.plane.workdir / "certs" / "apiserver.crt"))
        self.headers = {"Authorization": f"Bearer {naive.plane.admin_token}"}
        self.ready = threading.Barrier(len(paths) + 1)
        for path in paths:
            threading.Thread(target=self._watch, args=(path,), daemon=True).start()
        self.ready.wait(timeout=60)

    def _get(self, url: str, *, timeout: float) -> Any:
        request = urllib.request.Request(url, headers=self.headers)
        return urllib.request.urlopen(request, context=self.context, timeout=timeout)

    def _watch(self, path: str) -> None:
        with self._get(self.naive.plane.url + path, timeout=60) as response:
            version = json.loads(response.read())["metadata"]["resourceVersion"]
        stream = self._get(f"{self.naive.plane.url}{path}?watch=1&resourceVersion={version}", timeout=3600)
        self.ready.wait(timeout=60)
        with stream:
            for line in stream:
                event = json.loads(line)
                if event.get("type") == "MODIFIED":
                    self.events.put(event["object"])

    async def drain(self, *, count: int, plural_of: dict[str, str], within: float = 900) -> Work:
        """Write the documents of the next ``count`` events, one by one; the time from the first event."""
        first: float | None = None
        done = 0
        deadline = time.monotonic() + within
        while done < count and time.monotonic() < deadline:
            try:
                body = await asyncio.to_thread(self.events.get, True, 1.0)
            except queue.Empty:
                continue
            first = first or time.monotonic()
            document = self.builder.instance(as_body(body), plural=plural_of[body["kind"]], policy=InstancePolicy())
            if isinstance(document, Document):
                await self.naive._write(document)
            done += 1
        if done < count:
            raise TimeoutError(f"the naive watcher saw {done} of {count} events within {within:.0f}s")
        return Work(seconds=time.monotonic() - (first or time.monotonic()), embeddings=done, upserts=done)
