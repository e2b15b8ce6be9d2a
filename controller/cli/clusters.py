"""``kubevec clusters`` and ``kubevec forget-cluster``: the clusters one store holds, and removing one."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands, emit, open_store, output_flag
from kubevec.core.errors import CommandError

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings


def register(commands: Commands) -> None:
    clusters = commands.add(
        "clusters",
        clusters_command,
        help="the clusters whose documents the store holds: documents, last resync, controller version",
    )
    output_flag(clusters)
    forget = commands.add(
        "forget-cluster",
        forget_command,
        help="remove one cluster's documents and its part of shared ones (a decommissioned cluster)",
    )
    forget.add_argument("name", help="the cluster name, as `kubevec clusters` lists it")
    forget.add_argument("--yes", action="store_true", help="remove them (without it: only say what would go)")


async def clusters_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.controller.serving import active_collections
    from kubevec.controller.sync.status import STATUS_COLLECTION
    from kubevec.inference.documents import CAPABILITIES, INSTANCES
    from kubevec.query.clusters import list_clusters

    store = open_store(settings, existing=True)
    try:
        names, _ = await active_collections(store, settings=settings)
        found = await list_clusters(
            store=store,
            capabilities=names[CAPABILITIES],
            instances=names[INSTANCES],
            status=settings.collection(STATUS_COLLECTION),
        )
    finally:
        await store.close()
    rows = [dataclasses.asdict(c) for c in found]
    header = f"{'CLUSTER':<24} {'INSTANCES':>9} {'TYPES':>6} {'SHARED':>6}  {'LAST RESYNC':<20} {'READY':<5} VERSION"
    lines = [
        f"{c.name or '(none)':<24} {c.instances:>9} {c.capabilities:>6} {c.shared:>6}  {c.last_resync or '-':<20} "
        f"{'-' if c.ready is None else str(c.ready).lower():<5} {c.version or '-'}"
        for c in found
    ]
    emit(args.output, rows, text="\n".join([header, *lines]) if found else "The store holds no cluster's documents.")
    return 0


async def forget_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.controller.serving import active_collections
    from kubevec.controller.sync.forget import forget_cluster
    from kubevec.controller.sync.status import STATUS_COLLECTION
    from kubevec.inference.documents import CAPABILITIES, INSTANCES
    from kubevec.query.clusters import list_clusters

    store = open_store(settings, existing=True)
    try:
        names, _ = await active_collections(store, settings=settings)
        where = {
            "capabilities": names[CAPABILITIES],
            "instances": names[INSTANCES],
            "status": settings.collection(STATUS_COLLECTION),
        }
        known = {c.name for c in await list_clusters(store=store, **where)}
        if args.name not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise CommandError(f"the store holds no documents of cluster {args.name!r} (it holds: {listed})")
        gone = await forget_cluster(store=store, cluster=args.name, dry_run=not args.yes, **where)
    finally:
        await store.close()
    what = (
        f"instances={gone.instances} capabilities_deleted={gone.capabilities_deleted} "
        f"capabilities_shared_kept={gone.capabilities_kept} status_records={gone.status}"
    )
    if not args.yes:
        print(f"Would forget cluster {args.name}: {what}")
        print("Nothing was removed; run again with --yes to remove them.", file=sys.stderr)
        return 1
    print(f"Forgot cluster {args.name}: {what}")
    if args.name == settings.cluster_name:
        print(
            f"kubevec forget-cluster: note: {args.name} is this configuration's own cluster_name; "
            "a controller still running for it writes its documents back on its next resync",
            file=sys.stderr,
        )
    return 0
