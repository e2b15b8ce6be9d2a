"""``kubevec index crds`` and ``kubevec describe``: CRD files -> capability documents, with no cluster."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands, open_embedder, open_store
from kubevec.core.errors import CommandError

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings

    pass

logger = logging.getLogger("kubevec")


def register(commands: Commands) -> None:
    index = commands.add("index", None, help="index resources without a cluster")
    crds = commands.nested(index, dest="what", required=True).add(
        "crds", index_command, help="describe, embed and store CRD YAML files or folders"
    )
    crds.add_argument("paths", nargs="+", type=Path, help="CRD YAML files or folders (multi-document OK)")
    describe = commands.add("describe", describe_command, help="print the capability documents for CRD YAML files")
    describe.add_argument("paths", nargs="+", type=Path, help="CRD YAML files or folders (multi-document OK)")
    describe.add_argument("--json", action="store_true", help="print JSON instead of text")
    describe.add_argument("--cluster", default=None, help="cluster name (default: KUBEVEC_CLUSTER_NAME)")


async def index_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.controller.serving import active_collections
    from kubevec.controller.sync.crd_files import index_crds
    from kubevec.inference.documents import CAPABILITIES

    embedder = open_embedder(settings)
    store = open_store(settings)
    try:
        names, _ = await active_collections(store, settings=settings)
        report = await index_crds(
            paths=args.paths,
            store=store,
            embedder=embedder,
            collection=names[CAPABILITIES],
            cluster=settings.cluster_name,
            batch_size=settings.embedder.batch_size,
        )
    finally:
        await store.close()
    for error in report.errors:
        print(f"kubevec index: {error}", file=sys.stderr)
    print(
        f"Indexed CRDs files={report.files} parsed={report.parsed} documents={report.documents} embedded={report.embedded} "
        f"unchanged={report.unchanged} errors={len(report.errors)} store={settings.store.backend}:{store.location}"
    )
    return 1 if report.errors else 0


def describe_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.inference.capabilities import describe_crd_files

    report = describe_crd_files(args.paths, cluster=args.cluster or settings.cluster_name)
    for error in report.errors:
        print(f"kubevec describe: {error}", file=sys.stderr)
    out, failures = report.documents, len(report.errors)
    if args.json:
        print(json.dumps([{"id": d.id, "text": d.text, "metadata": dict(d.metadata)} for d in out], indent=2))
    else:
        for doc in out:
            meta = doc.metadata
            print(f"# {doc.id}  ({meta['scope']}, complexity {meta['complexity']})")
            print(doc.text)
            capabilities = meta.get("capabilities")
            if isinstance(capabilities, list) and capabilities:
                print(f"  capabilities: {', '.join(str(c) for c in capabilities)}")
            print()
    if not out and not failures:
        raise CommandError("no CustomResourceDefinitions found in the given paths")
    return 1 if failures else 0
