"""``kubevec``: the command line. One entry point; heavy imports happen inside each command."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from controller.settings import Settings
from inference.documents import COLLECTIONS
from query.request import MAX_K

if TYPE_CHECKING:
    from backends import VectorStore
    from controller.app import App
    from inference.providers.config import EmbedderSettings
    from inference.providers.embedders.base import Embedder
    from query.search import SearchService

logger = logging.getLogger("kubevec")


def _version() -> str:
    from query.version import kubevec_version

    return kubevec_version()


class CommandError(RuntimeError):
    """A failure to report on one line, with a non-zero exit and no traceback."""


def _global_flags(parser: argparse.ArgumentParser, *, default: Any) -> None:
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        default=default,
        help="kubeconfig file (default: KUBECONFIG, in-cluster, ~/.kube/config)",
    )
    parser.add_argument("--context", default=default, help="kubeconfig context to use (default: its current-context)")


class _SubcommandsWithGlobalFlags:
    """``add_subparsers()`` whose every parser (nested ones too) also takes the global flags."""

    def __init__(self, action: Any, common: argparse.ArgumentParser) -> None:
        self._action, self._common = action, common

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self._action.add_parser(name, parents=[self._common], **kwargs)
        return parser

    def nested(self, parser: argparse.ArgumentParser, **options: Any) -> _SubcommandsWithGlobalFlags:
        """Subcommands of a subcommand (``index crds``), taking the global flags as well."""
        return _SubcommandsWithGlobalFlags(parser.add_subparsers(**options), self._common)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kubevec", description="Keep a vector database in sync with Kubernetes.")
    parser.add_argument("--version", action="version", version=f"kubevec {_version()}")
    _global_flags(parser, default=None)
    # The global flags work after the subcommand too (`kubevec status --kubeconfig x`), as kubectl's do:
    # every subcommand takes them, with no default of its own so one given before is not overwritten.
    common = argparse.ArgumentParser(add_help=False)
    _global_flags(common, default=argparse.SUPPRESS)
    sub = _SubcommandsWithGlobalFlags(parser.add_subparsers(dest="command", required=True), common)

    run = sub.add_parser("run", help="run the controller against the current cluster (KUBECONFIG or in-cluster)")
    run.add_argument("--reindex", action="store_true", help="drop both collections first and rebuild them")
    run.add_argument("-n", "--namespace", help="watch this namespace only (default: all, as KUBEVEC_NAMESPACE)")

    index = sub.add_parser("index", help="index resources without a cluster")
    index_sub = sub.nested(index, dest="what", required=True)
    crds = index_sub.add_parser("crds", help="describe, embed and store CRD YAML files or folders")
    crds.add_argument("paths", nargs="+", type=Path, help="CRD YAML files or folders (multi-document OK)")

    search = sub.add_parser("search", help="search the capabilities or instances collection")
    search.add_argument(
        "query", nargs="?", default=None, help="natural-language question (optional with --keyword/--filter)"
    )
    search.add_argument(
        "--collection", choices=COLLECTIONS, default="capabilities", help="resource types (default) or live objects"
    )
    search.add_argument("--kind", help="only this kind, e.g. Certificate")
    search.add_argument("--group", help="only this API group, e.g. cert-manager.io")
    search.add_argument("--cluster", help="only this cluster's documents (several controllers can share a store)")
    search.add_argument(
        "--health",
        choices=["healthy", "progressing", "degraded", "unknown"],
        help="only objects whose status summary is this (instances)",
    )
    where = search.add_mutually_exclusive_group()
    where.add_argument("-n", "--namespace", help="only objects in this namespace (instances)")
    where.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace (the default)")
    search.add_argument(
        "-l", "--label", action="append", default=[], help="k=v, comma-separated or repeated (all must match)"
    )
    search.add_argument("--filter", help='portable filter JSON, e.g. \'{"kind": "Deployment"}\'')
    search.add_argument("--keyword", help="words the documents must contain (alone: keyword search, no embedding)")
    search.add_argument("-k", type=int, default=5, help=f"how many results (1-{MAX_K})")
    search.add_argument("--no-hybrid", action="store_true", help="dense only, no BM25 fusion")
    search.add_argument(
        "--no-rerank", action="store_true", help="skip the configured reranker (KUBEVEC_RERANKER__PROVIDER)"
    )
    search.add_argument("--mmr", action="store_true", help="diversify results (maximal marginal relevance)")
    search.add_argument("--min-score", type=float, help="drop results scoring below this (0-1)")
    search.add_argument(
        "-o",
        "--output",
        choices=["text", "wide", "json", "yaml", "name"],
        default="text",
        help="text (compact, within a token budget), wide (whole texts), json, yaml, or name (ids only)",
    )
    search.add_argument("--json", action="store_true", help="the same as -o json")

    status = sub.add_parser(
        "status", help="store, embedder, document counts per collection and kind, SyncPolicy status"
    )
    status.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    get = sub.add_parser("get", help="print one stored document (text and metadata) by its id")
    get.add_argument("id", help="a document id, as search prints it")
    get.add_argument(
        "--collection", choices=COLLECTIONS, default=None, help="where to look (default: both, instances first)"
    )
    get.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    resolve = sub.add_parser("resolve", help="a kind's group, apiVersion, versions, scope and top fields")
    resolve.add_argument("name", help="kind, plural, short name, plural.group, or a phrase")
    resolve.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    migrate = sub.add_parser(
        "migrate",
        help="move the store to the configured embedding model: new collections from the stored texts, "
        "then an atomic switch (stop the controller first, or set KUBEVEC_SYNC__MIGRATE=true)",
    )
    migrate.add_argument("--batch-size", type=int, default=64, help="texts per embedding call (default 64)")

    related = sub.add_parser("related", help="what an object references and what references it (from the index)")
    related.add_argument("id", help="an instance id as search prints it, or Kind/namespace/name (Kind/_cluster/name)")
    related.add_argument("--hops", type=int, default=1, help="1 (default) to 3; later hops keep the direction")
    related.add_argument(
        "--direction",
        choices=["out", "in", "both"],
        default="both",
        help="out: what it uses; in: what uses it (what breaks if it goes); both (default)",
    )
    related.add_argument("--cluster", help="the cluster_name the object belongs to (default: any)")
    related.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    facets = sub.add_parser("facets", help="distinct values of a metadata field with their counts")
    facets.add_argument("field", help="kind, group, namespace, labels, scope, capabilities, providers ...")
    facets.add_argument("--collection", choices=COLLECTIONS, default="instances", help="which collection")
    facets.add_argument("--limit", type=int, default=100, help="most frequent values to print (default 100)")
    facets.add_argument("--cluster", help="only this cluster's documents")
    facets.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    mcp = sub.add_parser("mcp", help="serve the search tools over the Model Context Protocol")
    mcp.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio", help="stdio (default) or streamable HTTP at /mcp"
    )
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default loopback)")
    mcp.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    mcp.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        help="Host header to accept besides loopback, e.g. kubevec.tools.svc:* (repeatable; '*' accepts any)",
    )
    mcp.add_argument("--allowed-origin", action="append", default=None, help="Origin header to accept (repeatable)")
    mcp.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="serve HTTP on a non-loopback address without KUBEVEC_MCP_TOKEN (logged as a warning)",
    )

    describe = sub.add_parser("describe", help="print the capability documents for CRD YAML files")
    describe.add_argument("paths", nargs="+", type=Path, help="CRD YAML files or folders (multi-document OK)")
    describe.add_argument("--json", action="store_true", help="print JSON instead of text")
    describe.add_argument("--cluster", default=None, help="cluster name (default: KUBEVEC_CLUSTER_NAME)")
    return parser


def label_selector(values: Sequence[str]) -> list[str]:
    """``-l a=b,c=d -l e=f`` as kubectl reads it: every ``k=v`` must match."""
    return [label.strip() for value in values for label in value.split(",") if label.strip()]


def configuration_errors(exc: ValidationError) -> str:
    """Each problem as ``KUBEVEC_<FIELD>: message``, without the values given.

    pydantic's own text repeats the input, and for a check across fields that is every field of the
    section: a password in the url or an API key would be printed with it.
    """
    lines = []
    for error in exc.errors(include_input=False, include_url=False):
        where = "__".join(str(part) for part in error["loc"] if not isinstance(part, int)).upper()
        lines.append(f"KUBEVEC_{where}: {error['msg']}" if where else str(error["msg"]))
    return "; ".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:
        print(f"kubevec: invalid configuration: {configuration_errors(exc)}", file=sys.stderr)
        return 2
    flags = {"kubeconfig": args.kubeconfig, "kube_context": args.context}
    if args.command == "run":
        flags["namespace"] = args.namespace
    settings = settings.model_copy(update={key: value for key, value in flags.items() if value is not None})
    from controller.logs import install

    install(level=settings.log_level, format=settings.log_format)
    try:
        if args.command == "run":
            return run(args, settings)
        if args.command == "describe":
            return describe(args, settings)
        if args.command == "index":
            return asyncio.run(index_command(args, settings))
        if args.command == "search":
            return asyncio.run(search_command(args, settings))
        if args.command == "mcp":
            return mcp_command(args, settings)
        if args.command == "status":
            return asyncio.run(status_command(args, settings))
        if args.command == "get":
            return asyncio.run(get_command(args, settings))
        if args.command == "resolve":
            return asyncio.run(resolve_command(args, settings))
        if args.command == "facets":
            return asyncio.run(facets_command(args, settings))
        if args.command == "related":
            return asyncio.run(related_command(args, settings))
        if args.command == "migrate":
            return asyncio.run(migrate_command(args, settings))
    except CommandError as exc:
        print(f"kubevec {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `kubevec ... | head`: the reader is gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    raise AssertionError(f"unhandled command {args.command}")  # pragma: no cover


def _open_store(settings: Settings, *, existing: bool = False) -> VectorStore:
    """The configured store; ``existing``: readers refuse to create a local store that is not there."""
    from backends.factory import open_store

    local = settings.store.path if settings.store.backend in ("chroma", "qdrant") and not settings.store.url else None
    if existing and local is not None and not local.exists():
        raise CommandError(
            f"the {settings.store.backend} store at {local} does not exist: index one first (kubevec run or kubevec index crds), "
            "or point KUBEVEC_STORE__PATH at it"
        )
    return open_store(settings.store)


def _open_embedder(settings: Settings) -> Embedder:
    from inference.providers.config import make_embedder
    from inference.providers.embedders.base import EmbedderError

    try:
        return make_embedder(settings.embedder, verified_dir=_verified_dir(settings))
    except EmbedderError as exc:
        raise CommandError(str(exc)) from exc


def _verified_dir(settings: Settings) -> Path:
    """Where one-shot commands remember the model files they verified (sha256 once per file identity)."""
    return settings.cache_dir / "verified-models"


def _search_service(
    settings: Settings, store: VectorStore, *, embedder: bool = False, one_shot: bool = True
) -> SearchService:
    """A reader of the active generation's collections, with that generation's model for queries.

    The embedder is loaded only when a query needs it; after a migration to another model (see
    ``kubevec migrate``), queries are embedded with the model that built the collections read.
    ``one_shot`` (a command that embeds one query and exits): the local model keeps its int8
    weights, which loads 0.18 s faster and costs ~56 ms on that one query (the same vector); a
    server (``kubevec mcp``) folds them once and embeds each query in ~6 ms.
    """
    from backends.generations import Generation
    from controller.migrate import active_collections
    from query.search import SearchService

    bases = settings.bases()
    loaded: dict[str, Embedder] = {}

    def embedder_for(generation: Generation | None) -> Embedder | None:
        if not embedder:
            return None
        wanted = settings.embedder
        if generation is not None and generation.provider and generation.provider != wanted.provider:
            wanted = wanted.model_copy(update={"provider": generation.provider, "model": generation.model})
        elif generation is not None and generation.provider and generation.model != wanted.model:
            wanted = wanted.model_copy(update={"model": generation.model})
        if one_shot:
            wanted = wanted.model_copy(update={"int8_weights": True})
        key = f"{wanted.provider}:{wanted.model}"
        if key not in loaded:
            loaded[key] = _LazyEmbedder(wanted, verified_dir=_verified_dir(settings) if one_shot else None)
        return loaded[key]

    async def refresh() -> tuple[Mapping[str, str], Embedder | None]:
        names, generation = await active_collections(store, settings=settings)
        return names, embedder_for(generation)

    reranker = None
    if embedder:
        from inference.providers.embedders.base import EmbedderError
        from inference.providers.rerank import make_reranker

        try:
            reranker = make_reranker(
                settings.reranker, api_key=settings.embedder.api_key, base_url=settings.embedder.base_url
            )
        except EmbedderError as exc:
            raise CommandError(str(exc)) from exc
    from query.lexical import LexicalIndex

    place = hashlib.sha256(f"{store.backend}:{store.location}".encode()).hexdigest()[:16]
    lexical = LexicalIndex(store=store, cache_dir=settings.cache_dir / "lexical" / place)
    return SearchService(
        store=store,
        embedder=None,
        collections=bases,
        lexical=lexical,
        refresh=refresh,
        reranker=reranker,
        rerank_candidates=settings.reranker.candidates,
    )


async def index_command(args: argparse.Namespace, settings: Settings) -> int:
    from backends import BackendError
    from controller.migrate import active_collections
    from inference.documents import CAPABILITIES, InferenceError
    from query.indexing import index_crds

    embedder = _open_embedder(settings)
    store = _open_store(settings)
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
    except (BackendError, InferenceError) as exc:
        raise CommandError(str(exc)) from exc
    finally:
        await store.close()
    for error in report.errors:
        print(f"kubevec index: {error}", file=sys.stderr)
    print(
        f"Indexed CRDs files={report.files} documents={report.documents} embedded={report.embedded} "
        f"unchanged={report.unchanged} errors={len(report.errors)} store={settings.store.backend}:{store.location}"
    )
    return 1 if report.errors else 0


async def search_command(args: argparse.Namespace, settings: Settings) -> int:
    from backends import BackendError, InvalidFilter
    from backends.filters import load_json_text
    from inference.providers.embedders.base import EmbedderError
    from query.render import DEFAULT_TOKEN_BUDGET, as_json, compact
    from query.request import SearchError, SearchRequest

    try:
        filter_ = load_json_text(args.filter) if args.filter else None
    except InvalidFilter as exc:
        raise CommandError(f"--filter: {exc}") from exc
    try:
        request = SearchRequest.build(
            collection=args.collection,
            query=args.query,
            keyword=args.keyword,
            filter=filter_,
            kind=args.kind,
            group=args.group,
            namespace=args.namespace,
            labels=label_selector(args.label),
            cluster=args.cluster,
            health=args.health,
            k=args.k,
            hybrid=not args.no_hybrid,
            rerank=not args.no_rerank,
            mmr=args.mmr,
            min_score=args.min_score,
        )
    except SearchError as exc:
        raise CommandError(str(exc)) from exc
    store = _open_store(settings, existing=True)
    service = _search_service(settings, store, embedder=request.query is not None)
    try:
        results = await service.search(request)
    except (SearchError, BackendError, EmbedderError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    output = "json" if args.json else args.output
    if output == "json":
        print(as_json(results))
    elif output == "yaml":
        import yaml

        print(yaml.safe_dump([r.to_json() for r in results], sort_keys=False, allow_unicode=True), end="")
    elif output == "name":
        print("\n".join(r.id for r in results))
    else:
        print(compact(results, token_budget=None if output == "wide" else DEFAULT_TOKEN_BUDGET))
    return 0


async def get_command(args: argparse.Namespace, settings: Settings) -> int:
    """One document by id, from the collection named or from both (the id says which, but not always to us)."""
    from backends import BackendError
    from query.search import SearchError

    store = _open_store(settings, existing=True)
    service = _search_service(settings, store)
    try:
        found = await service.find_document(args.id, collection=args.collection)
    except (SearchError, BackendError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    if found is not None:
        result, collection = found
        document = {"id": result.id, "collection": collection, "metadata": dict(result.metadata)}
        _print(args.output, {**document, "text": result.text}, text=_document_text(document, result.text))
        return 0
    where = args.collection or "instances or capabilities"
    raise CommandError(f"no document {args.id!r} in {where}; ids are what `kubevec search` prints")


async def resolve_command(args: argparse.Namespace, settings: Settings) -> int:
    from backends import BackendError
    from inference.providers.embedders.base import EmbedderError
    from query.search import SearchError

    store = _open_store(settings, existing=True)
    service = _search_service(settings, store, embedder=True)
    try:
        answers = await service.resolve_kind(args.name)
    except (SearchError, BackendError, EmbedderError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    if not answers:
        raise CommandError(f"no resource type matches {args.name!r}")
    lines = [
        f"{a['kind']}  {a['apiVersion']}  resource={a['resource']}  scope={a['scope']}  "
        f"served={','.join(a['servedVersions'])}  short={','.join(a['shortNames']) or '-'}  [{a['match']}"
        + (f" {a['similarity']:.2f}]" if "similarity" in a else "]")
        for a in answers
    ]
    _print(args.output, answers, text="\n".join(lines))
    return 0


class _LazyEmbedder:
    """The configured embedder, loaded only if an exact name lookup finds nothing (the model takes a second)."""

    def __init__(self, settings: EmbedderSettings, *, verified_dir: Path | None = None) -> None:
        self._settings = settings
        self._verified_dir = verified_dir
        self._embedder: Embedder | None = None

    def _load(self) -> Embedder:
        if self._embedder is None:
            from inference.providers.config import make_embedder
            from inference.providers.embedders.base import EmbedderError

            try:
                self._embedder = make_embedder(self._settings, verified_dir=self._verified_dir)
            except EmbedderError as exc:
                raise CommandError(str(exc)) from exc
        return self._embedder

    @property
    def name(self) -> str:
        return self._load().name

    @property
    def dimension(self) -> int:
        return self._load().dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._load().embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        return await self._load().embed_query(text)


async def migrate_command(args: argparse.Namespace, settings: Settings) -> int:
    from backends import BackendError
    from controller.migrate import migrate
    from inference.providers.embedders.base import EmbedderError

    if args.batch_size < 1:
        raise CommandError(f"--batch-size must be at least 1, got {args.batch_size}")
    store = _open_store(settings, existing=True)
    embedder = _open_embedder(settings)
    try:
        done = await migrate(
            store=store,
            embedder=embedder,
            settings=settings.embedder,
            bases=settings.bases(),
            pointer=settings.pointer,
            batch_size=args.batch_size,
            progress=sys.stderr,
        )
    except (BackendError, EmbedderError) as exc:
        raise CommandError(f"{str(exc).splitlines()[0]} (run it again to resume)") from exc
    finally:
        await store.close()
    if done.generation is None:
        print("Nothing to migrate: the store holds no collections yet")
    elif not done.changed:
        print(f"Nothing to migrate: generation {done.generation.number} already uses {done.generation.embedder}")
    else:
        assert done.previous is not None
        print(
            f"Migrated generation {done.previous.number} ({done.previous.embedder}) to generation "
            f"{done.generation.number} ({done.generation.embedder}): {done.embedded} embedded, "
            f"{done.skipped} already copied, {done.removed} removed; readers switched, old collections dropped"
        )
    return 0


async def related_command(args: argparse.Namespace, settings: Settings) -> int:
    from backends import BackendError
    from query.search import SearchError

    store = _open_store(settings, existing=True)
    service = _search_service(settings, store)
    try:
        answer = await service.related(args.id, hops=args.hops, direction=args.direction, cluster=args.cluster)
    except (SearchError, BackendError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    _print(args.output, answer.to_json(), text="\n".join(answer.lines()))
    return 0


async def facets_command(args: argparse.Namespace, settings: Settings) -> int:
    from backends import BackendError
    from query.search import SearchError

    if args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    store = _open_store(settings, existing=True)
    service = _search_service(settings, store)
    try:
        counts = await service.facets(args.collection, args.field, limit=args.limit, cluster=args.cluster)
    except (SearchError, BackendError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = [f"{count:>{width}}  {value}" for value, count in counts.items()]
    _print(args.output, counts, text="\n".join(lines) if lines else f"(no document has a {args.field!r} field)")
    return 0


async def status_command(args: argparse.Namespace, settings: Settings) -> int:
    """What an operator checks first: is the store there and healthy, built with which model, how full, in sync?"""
    from backends import BackendError
    from controller.status import STATUS_COLLECTION

    store = _open_store(settings, existing=True)
    service = _search_service(settings, store)
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
        if health.ok:
            report["controllers"] = await _reported_status(store, settings.collection(STATUS_COLLECTION))
    except BackendError as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    report["cluster"] = await _sync_policies(settings)
    _print(args.output, report, text=_status_text(report))
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
    from controller.kube import KubeReader, short_reason
    from controller.policy import GROUP, PLURAL, VERSION

    try:
        kube = KubeReader(kubeconfig=settings.kubeconfig, context=settings.kube_context)
        try:
            listing = await kube.get(f"/apis/{GROUP}/{VERSION}/{PLURAL}", request_timeout=10)
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


def _status_text(report: dict[str, Any]) -> str:
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
        lines.append(f"{'':14}{_kinds_line(info['kinds'])}")
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


def _kinds_line(kinds: dict[str, int], *, width: int = 90) -> str:
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


def _document_text(document: dict[str, Any], text: str) -> str:
    lines = [f"id: {document['id']}", f"collection: {document['collection']}"]
    lines += [
        f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}"
        for key, value in sorted(document["metadata"].items())
    ]
    return "\n".join([*lines, "", text])


def _print(output: str, data: Any, *, text: str) -> None:
    if output == "json":
        print(json.dumps(data, indent=2, sort_keys=True))
    elif output == "yaml":
        import yaml

        print(yaml.safe_dump(data, sort_keys=True, allow_unicode=True), end="")
    else:
        print(text)


def mcp_command(args: argparse.Namespace, settings: Settings) -> int:
    from controller.reviews import build_authorizer
    from query.access import AccessConfigError
    from query.mcp import UnsafeBind, serve

    store = _open_store(settings, existing=True)
    _open_embedder(settings)  # a model that cannot load is an error now, not at the first query
    service = _search_service(settings, store, embedder=True, one_shot=False)
    try:
        authorizer = build_authorizer(settings, placements=lambda: service.placements(settings.cluster_name))
        serve(
            service,
            transport=args.transport,
            host=args.host,
            port=args.port,
            authorizer=authorizer,
            allowed_hosts=args.allowed_host or settings.mcp_allowed_hosts,
            allowed_origins=args.allowed_origin or settings.mcp_allowed_origins,
            allow_unauthenticated=args.allow_unauthenticated,
            limits=settings.mcp_limits(),
        )
    except (UnsafeBind, AccessConfigError) as exc:
        raise CommandError(str(exc)) from exc
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    import kopf

    from controller.app import App
    from controller.kube import KubeError, load_configuration, preflight
    from controller.operator import build_registry, operator_kwargs
    from controller.peering import PeeringIdentity
    from inference.providers.embedders.base import EmbedderError
    from query.mcp import UnsafeBind, check_bind

    authenticated = bool(settings.mcp_token or settings.mcp_tokens_file or settings.mcp_kubernetes_auth)
    if settings.mcp_port:  # before kopf starts: the same check the server makes, as one line
        try:
            check_bind(settings.server.host, authenticated=authenticated, port=settings.mcp_port)
        except UnsafeBind as exc:
            raise CommandError(str(exc)) from exc
    try:  # one clear line for a missing kubeconfig or an unreachable API server, before kopf starts
        server_version = preflight(load_configuration(settings.kubeconfig, context=settings.kube_context))
    except KubeError as exc:
        raise CommandError(str(exc)) from exc

    peering = (
        PeeringIdentity.create(
            name=settings.peering, priority=settings.peering_priority, lifetime=settings.peering_lifetime_seconds
        )
        if settings.peering
        else None
    )
    try:
        app = App(settings=settings, peering=peering)
    except (EmbedderError, UnsafeBind) as exc:
        raise CommandError(str(exc)) from exc
    if args.reindex:
        asyncio.run(_drop_collections(app, settings))
    logger.info(
        "Starting the controller cluster=%s server=%s store=%s embedder=%s",
        settings.cluster_name,
        server_version,
        f"{settings.store.backend}:{app.store.location}",
        app.embedder.name,
    )
    registry = build_registry(settings=settings, app=app)
    from controller.tracing import configure as configure_tracing

    tracing = settings.tracing
    provider = configure_tracing(
        endpoint=tracing.endpoint,
        service_name=tracing.service_name,
        sample_ratio=tracing.sample_ratio,
        cluster=settings.cluster_name,
    )
    if provider is not None:
        logger.info("Tracing to an OTLP collector endpoint=%s sample_ratio=%s", tracing.endpoint, tracing.sample_ratio)
    try:
        asyncio.run(kopf.operator(registry=registry, **operator_kwargs(settings, peering=peering)))
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still batched
    return 0


async def _drop_collections(app: App, settings: Settings) -> None:
    """Drop the active generation's collections and the pointer: the rebuild starts at generation 0."""
    from controller.migrate import active_collections

    names, _ = await active_collections(app.store, settings=settings)
    for name in [*names.values(), settings.pointer]:
        await app.store.drop_collection(name)
        logger.info("Dropped collection=%s for a reindex", name)


def describe(args: argparse.Namespace, settings: Settings) -> int:
    from inference.capabilities import describe_crd_files
    from inference.documents import InferenceError

    try:
        report = describe_crd_files(args.paths, cluster=args.cluster or settings.cluster_name)
    except InferenceError as exc:
        raise CommandError(str(exc)) from exc
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


if __name__ == "__main__":
    sys.exit(main())
