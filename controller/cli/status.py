"""``kubevec status``: the store, the embedder, counts per collection and kind, and the SyncPolicies' status."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any

from kubevec.controller.cli.common import Commands, emit, open_store, output_flag, search_service
from kubevec.controller.kube.resources import api_path
from kubevec.inference.collections import COLLECTIONS

if TYPE_CHECKING:
    from kubevec.backends import VectorStore
    from kubevec.controller.settings import Settings

logger = logging.getLogger("kubevec")


def register(commands: Commands) -> None:
    status = commands.add(
        "status", status_command, help="store, embedder, document counts per collection and kind, SyncPolicy status"
    )
    output_flag(status)


async def status_command(args: argparse.Namespace, settings: Settings) -> int:
    """What an operator checks first: is the store there and healthy, built with which model, how full, in sync?"""
    from kubevec.controller.sync.status import STATUS_COLLECTION
    from kubevec.inference.change_records import CHANGES

    store = open_store(settings, existing=True)
    service = search_service(settings, store)
    report: dict[str, Any] = {}
    try:
        health = await store.health()
        report["store"] = {"backend": store.backend, "location": store.location, "healthy": health.ok}
        if not health.ok:
            report["store"]["error"] = health.detail.splitlines()[0]
        report["embedder"] = {"provider": settings.embedder.provider, "model": _configured_model(settings)}
        report["collections"] = {}
        if health.ok:
            await service.fresh()  # the active generation's names (see `kubevec migrate`)
        for collection in COLLECTIONS if health.ok else ():
            name = service.collection_name(collection)
            info = await store.collection_info(name)
            if info is None:
                report["collections"][collection] = {"name": name, "exists": False}
                continue
            kinds = await service.facets(collection, "kind", limit=1000)
            report["collections"][collection] = {
                "name": name,
                "exists": True,
                "documents": await store.count(name),
                "embedder": info.embedder,
                "dimension": info.dimension,
                "kinds": kinds,
            }
        if health.ok and CHANGES in service.collections:
            name = service.collection_name(CHANGES)
            exists = await store.collection_info(name) is not None
            report["history"] = {"name": name, "exists": exists, "records": await store.count(name) if exists else 0}
        if health.ok:
            report["controllers"] = await _reported_status(store, settings.collection(STATUS_COLLECTION))
    finally:
        await store.close()
    report["cluster"] = await _sync_policies(settings)
    emit(args.output, report, text=status_text(report))
    return 0 if report["store"]["healthy"] else 1


def _configured_model(settings: Settings) -> str:
    if settings.embedder.provider == "voyage":
        return settings.embedder.model or "voyage-4 (default)"
    return str(settings.embedder.model_path or "all-MiniLM-L6-v2 (packaged int8 ONNX)")


async def _reported_status(store: VectorStore, collection: str) -> list[dict[str, Any]]:
    """What each controller writing this store last reported there (one record per cluster name)."""
    if await store.collection_info(collection) is None:
        return []
    return [
        {key: value for key, value in record.metadata.items() if key != "content_hash"}
        async for record in store.iter_records(collection)
    ]


async def _sync_policies(settings: Settings) -> dict[str, Any]:
    """The SyncPolicies' status as the controller last wrote it; the cluster may be unreachable from here."""
    from kubevec.controller.kube.client import KubeReader, short_reason
    from kubevec.controller.sync.policy import GROUP, PLURAL, VERSION

    try:
        kube = KubeReader(kubeconfig=settings.kubeconfig, context=settings.kube_context)
        try:
            listing = await kube.get(api_path(group=GROUP, version=VERSION, plural=PLURAL), request_timeout=10)
        finally:
            kube.close()
    except Exception as exc:  # no kubeconfig, API server down, CRD not installed, forbidden: all just reported
        return {"reachable": False, "error": short_reason(exc)}
    policies = []
    for item in listing.get("items", []):
        status = item.get("status") or {}
        policies.append(
            {
                "name": item["metadata"]["name"],
                "conditions": {c["type"]: c["status"] for c in status.get("conditions", [])},
                "lastSyncTime": status.get("lastSyncTime"),
                "lastFullResyncTime": status.get("lastFullResyncTime"),
                "documents": status.get("documents", {}),
                "lastError": status.get("lastError"),
            }
        )
    return {"reachable": True, "syncPolicies": policies}


def status_text(report: dict[str, Any]) -> str:
    store, embedder = report["store"], report["embedder"]
    lines = [
        f"Store:        {store['backend']} at {store['location']} "
        + ("(healthy)" if store["healthy"] else f"(NOT healthy: {store.get('error', '')})"),
        f"Embedder:     {embedder['provider']}, {embedder['model']}",
    ]
    for collection, info in report["collections"].items():
        if not info["exists"]:
            lines.append(f"{collection + ':':<14}not created yet ({info['name']})")
            continue
        lines.append(
            f"{collection + ':':<14}{info['documents']} documents, built with {info['embedder']} "
            f"({info['dimension']} dimensions)"
        )
        lines.append(f"{'':14}{kinds_line(info['kinds'])}")
    if "history" in report:
        history = report["history"]
        if history["exists"]:
            lines.append(f"{'changes:':<14}{history['records']} records (kubevec changes)")
        else:
            lines.append(f"{'changes:':<14}none recorded yet ({history['name']}; the controller records them)")
    for controller in report.get("controllers", []):
        state = "ready" if controller["ready"] else "not ready"
        state += ", DEGRADED" if controller["degraded"] else ""
        documents = " ".join(
            f"{key.removeprefix('documents_')}={value}"
            for key, value in sorted(controller.items())
            if key.startswith("documents_")
        )
        lines.append(
            f"Controller:   cluster {controller['cluster']} {state} (reported {controller['reported_at']}, "
            f"kubevec {controller['version']}) documents: {documents}"
        )
        lines.append(
            f"{'':14}last sync {controller['last_sync_time']}, "
            f"last full resync {controller['last_full_resync_time'] or 'not yet'}"
        )
        if controller["last_error"]:
            lines.append(f"{'':14}last error: {controller['last_error']}")
        if controller.get("skipped"):
            names = ", ".join(controller.get("skipped_objects") or [])
            lines.append(f"{'':14}skipped {controller['skipped']} objects that cannot be indexed: {names}")
    if "controllers" in report and not report["controllers"]:
        lines.append("Controller:   no status record in the store (no controller has written to it yet)")
    cluster = report["cluster"]
    if not cluster["reachable"]:
        lines.append(f"Cluster:      not reachable from here ({cluster['error']}); SyncPolicy status unknown")
    elif not cluster["syncPolicies"]:
        lines.append("SyncPolicy:   none (the defaults apply)")
    for policy in cluster.get("syncPolicies", []):
        conditions = " ".join(f"{k}={v}" for k, v in sorted(policy["conditions"].items())) or "no status yet"
        documents = " ".join(f"{k}={v}" for k, v in sorted(policy["documents"].items()))
        lines.append(f"SyncPolicy:   {policy['name']} {conditions} documents: {documents or '-'}")
        lines.append(f"{'':14}last sync {policy['lastSyncTime']}, last full resync {policy['lastFullResyncTime']}")
        if policy["lastError"]:
            lines.append(f"{'':14}last error: {policy['lastError']}")
    return "\n".join(lines)


def kinds_line(kinds: dict[str, int], *, width: int = 90) -> str:
    """The most frequent kinds that fit in ``width`` characters, then how many more (``-o json`` has all)."""
    if not kinds:
        return "(no kinds)"
    shown: list[str] = []
    for kind, count in kinds.items():
        if shown and len(", ".join([*shown, f"{kind} {count}"])) > width:
            break
        shown.append(f"{kind} {count}")
    more = len(kinds) - len(shown)
    return ", ".join(shown) + (f", ... (+{more} kinds)" if more else "")
