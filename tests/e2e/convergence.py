"""What the store must hold, computed from the live cluster alone, and how far the store is from it.

The checker lists the cluster with its own client (not the controller's), applies the SyncPolicy
objects it finds, reads the Warning Events (each object's latest is in its metadata), builds each
document with the inference layer, and compares ``(id, content_hash)``
pairs with everything the store holds: *missing* (should be there, is not), *orphaned* (is there,
should not be) and *stale* (is there with another hash). Built-in capabilities need the server's
OpenAPI documents, so fault tests run with ``KUBEVEC_SYNC__BUILTIN_CAPABILITIES=false`` and the
checker expects CRD capabilities only.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from kubevec.backends.base import VectorStore
from kubevec.backends.chroma import ChromaStore
from kubevec.backends.filters import Eq
from kubevec.controller.kube.client import KubeReader, load_api_client
from kubevec.controller.sync.policy import GROUP, PLURAL, VERSION, EffectivePolicy, listable, parse_spec
from kubevec.controller.sync.reconcile import CRD_RESOURCE
from kubevec.core.errors import InferenceError
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.documents import CAPABILITIES, COLLECTIONS, INSTANCES, Collection
from kubevec.inference.fleet import is_shared, parts_of, resource_of
from kubevec.inference.instances import build_instance
from kubevec.inference.warnings import Warnings, named_of

Hashes = dict[Collection, dict[str, str]]


@dataclasses.dataclass(frozen=True)
class Drift:
    missing: tuple[str, ...]
    orphaned: tuple[str, ...]
    stale: tuple[str, ...]

    @property
    def converged(self) -> bool:
        return not (self.missing or self.orphaned or self.stale)

    def __str__(self) -> str:
        return (
            f"missing={len(self.missing)} orphaned={len(self.orphaned)} stale={len(self.stale)} "
            f"(first: {[*self.missing[:3], *self.orphaned[:3], *self.stale[:3]]})"
        )


async def expected(*, kubeconfig: Path, cluster: str) -> Hashes:
    """The exact (id, content_hash) pairs the cluster implies, for CRD capabilities and instances."""
    reader = KubeReader(api=load_api_client(kubeconfig))
    try:
        resources = await reader.discover()
        policy = EffectivePolicy()
        if any(r.ref.group == GROUP and r.ref.plural == PLURAL for r in resources):
            policy_resource = next(r for r in resources if r.ref.group == GROUP and r.ref.plural == PLURAL)
            policies = await reader.list_objects(policy_resource)
            specs = sorted((str(p["metadata"]["name"]), p.get("spec")) for p in policies)
            policy = EffectivePolicy.merge(parse_spec(name, spec) for name, spec in specs)
            assert policy_resource.ref.version == VERSION
        out: Hashes = {c: {} for c in COLLECTIONS}
        for crd in await reader.list_objects(CRD_RESOURCE):
            try:
                document = describe_crd(crd, cluster=cluster).to_document()
            except InferenceError:
                continue
            out[CAPABILITIES][document.id] = document.content_hash
        warnings = Warnings()
        events = next((r for r in resources if r.ref.group == "" and r.ref.plural == "events"), None)
        if events is not None:
            warnings.replace(await reader.list_objects(events))
        for resource in resources:
            if not listable(group=resource.ref.group, plural=resource.ref.plural, verbs=resource.verbs):
                continue
            if not policy.watches(group=resource.ref.group, kind=resource.ref.kind, plural=resource.ref.plural):
                continue
            for obj in await reader.list_objects(resource):
                if not policy.admits(obj):
                    continue
                try:
                    document = build_instance(
                        obj,
                        plural=resource.ref.plural,
                        cluster=cluster,
                        policy=policy.instance_policy,
                        warning=warnings.latest(str(obj["metadata"].get("uid") or ""), key=named_of(obj)),
                    ).to_document()
                except InferenceError:
                    continue
                out[INSTANCES][document.id] = document.content_hash
        return out
    finally:
        reader.close()


async def actual(store: VectorStore, *, cluster: str, prefix: str = "") -> Hashes:
    """What the store holds for ``cluster``: its instances, and its parts of the shared capability records
    (by resource, with the hash of the document its controller built; a part found twice, or a record
    from before sharing, counts as stale)."""
    capabilities: dict[str, str] = {}
    async for record in store.iter_records(f"{prefix}{CAPABILITIES}", page_size=1000):
        resource = resource_of(record.id)
        if not is_shared(record.id):
            if record.metadata.get("cluster") == cluster:
                capabilities[resource] = "from before sharing"
            continue
        for part in parts_of(record.metadata):
            if part.cluster == cluster:
                capabilities[resource] = "twice" if resource in capabilities else part.content_hash
    instances = {i: h async for i, h in store.iter_ids(f"{prefix}{INSTANCES}", filter=Eq("cluster", cluster))}
    return {CAPABILITIES: capabilities, INSTANCES: instances}


def drift(want: Hashes, have: Hashes) -> Drift:
    missing, orphaned, stale = [], [], []
    for collection in COLLECTIONS:
        w, h = want[collection], have[collection]
        missing += sorted(set(w) - set(h))
        orphaned += sorted(set(h) - set(w))
        stale += sorted(i for i in set(w) & set(h) if w[i] != h[i])
    return Drift(tuple(missing), tuple(orphaned), tuple(stale))


def measure(
    *, kubeconfig: Path, cluster: str, open_store: Callable[[], VectorStore], prefix: str = "", builtins: bool = False
) -> Drift:
    """``builtins``: the controller describes built-in kinds too; their records are not judged (only CRDs')."""

    async def run() -> Drift:
        store = open_store()
        try:
            want = await expected(kubeconfig=kubeconfig, cluster=cluster)
            have = await actual(store, cluster=cluster, prefix=prefix)
            if builtins:
                crds = want[CAPABILITIES]
                have[CAPABILITIES] = {r: h for r, h in have[CAPABILITIES].items() if r in crds}
            return drift(want, have)
        finally:
            await store.close()

    return asyncio.run(run())


def wait_converged(
    *,
    kubeconfig: Path,
    cluster: str,
    timeout: float,
    store_path: Path | None = None,
    open_store: Callable[[], VectorStore] | None = None,
    prefix: str = "",
    builtins: bool = False,
) -> tuple[Drift, float]:
    """Poll until the store holds exactly what the cluster implies; (final drift, seconds taken).

    The store is the embedded Chroma at ``store_path``, or whatever ``open_store`` opens (a server).
    """
    opener = open_store or (lambda: ChromaStore(path=str(store_path)))
    started = time.monotonic()
    last = Drift((), (), ())
    while time.monotonic() - started < timeout:
        try:
            last = measure(kubeconfig=kubeconfig, cluster=cluster, open_store=opener, prefix=prefix, builtins=builtins)
        except Exception as exc:  # the store may be mid-write or the cluster mid-restart
            last = Drift((f"<checker failed: {type(exc).__name__}: {exc}>",), (), ())
        if last.converged:
            return last, time.monotonic() - started
        time.sleep(1.0)
    return last, time.monotonic() - started
