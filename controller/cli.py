"""``kubevec``: the command line. One entry point; heavy imports happen inside each command."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from controller.settings import Settings

logger = logging.getLogger("kubevec")


class CommandError(RuntimeError):
    """A failure to report on one line, with a non-zero exit and no traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kubevec", description="Keep a vector database in sync with Kubernetes.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the controller against the current cluster (KUBECONFIG or in-cluster)")
    run.add_argument("--reindex", action="store_true", help="drop both collections first and rebuild them")

    describe = sub.add_parser("describe", help="print the capability documents for CRD YAML files")
    describe.add_argument("paths", nargs="+", type=Path, help="CRD YAML files or folders (multi-document OK)")
    describe.add_argument("--json", action="store_true", help="print JSON instead of text")
    describe.add_argument("--cluster", default=None, help="cluster name (default: KUBEVEC_CLUSTER_NAME)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:
        print(f"kubevec: invalid configuration: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        if args.command == "run":
            return run(args, settings)
        if args.command == "describe":
            return describe(args, settings)
    except CommandError as exc:
        print(f"kubevec {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    raise AssertionError(f"unhandled command {args.command}")  # pragma: no cover


def run(args: argparse.Namespace, settings: Settings) -> int:
    import asyncio

    import kopf

    from controller.app import App
    from controller.operator import build_registry, operator_kwargs
    from inference.embedders.base import EmbedderError

    try:
        app = App(settings=settings)
    except EmbedderError as exc:
        raise CommandError(str(exc)) from exc
    if args.reindex:
        asyncio.run(_drop_collections(app, settings))
    logger.info(
        "Starting the controller cluster=%s store=%s embedder=%s",
        settings.cluster_name,
        f"{settings.store.backend}:{app.store.location}",
        app.embedder.name,
    )
    registry = build_registry(settings=settings, app=app)
    asyncio.run(kopf.operator(registry=registry, **operator_kwargs(settings)))
    return 0


async def _drop_collections(app: object, settings: Settings) -> None:
    from controller.app import App
    from inference.documents import COLLECTIONS

    assert isinstance(app, App)
    for collection in COLLECTIONS:
        await app.store.drop_collection(settings.collection(collection))
        logger.info("Dropped collection=%s for a reindex", settings.collection(collection))


def describe(args: argparse.Namespace, settings: Settings) -> int:
    from inference.capabilities import describe_crd
    from inference.documents import InferenceError
    from inference.manifests import is_crd, iter_manifest_files, load_manifests

    cluster = args.cluster or settings.cluster_name
    failures = 0
    out = []
    try:
        files = list(iter_manifest_files(args.paths))
    except InferenceError as exc:
        raise CommandError(str(exc)) from exc
    for path in files:
        try:
            documents = load_manifests(path.read_text(), source=str(path))
        except (InferenceError, OSError, UnicodeDecodeError) as exc:
            print(f"kubevec describe: {exc}", file=sys.stderr)
            failures += 1
            continue
        for document in documents:
            if not is_crd(document):
                continue
            try:
                out.append(describe_crd(document, cluster=cluster).to_document())
            except InferenceError as exc:
                print(f"kubevec describe: {path}: {exc}", file=sys.stderr)
                failures += 1
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


if __name__ == "__main__":
    sys.exit(main())
