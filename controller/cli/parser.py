"""The command line's parser: every command, its flags, and the global flags that work before or after it."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubevec.inference.documents import COLLECTIONS
from kubevec.query.request import MAX_K

if TYPE_CHECKING:
    pass

logger = logging.getLogger("kubevec")


def _version() -> str:
    from kubevec.core.version import kubevec_version

    return kubevec_version()


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

    completion = sub.add_parser("completion", help="print a shell completion script: source <(kubevec completion bash)")
    completion.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete in")

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
    search.add_argument("--cursor", help="the next page of a filter-only listing (the cursor the last page printed)")
    search.add_argument(
        "--count-by",
        choices=["kind", "group", "namespace", "health", "cluster", "labels", "owner"],
        help="count the filter or keyword matches per value of this field instead of listing them",
    )
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
    get.add_argument("id", help="a document id, as search prints it (a capability also by plural.group)")
    get.add_argument("--cluster", help="as this cluster serves it (capabilities several clusters share)")
    get.add_argument(
        "--collection", choices=COLLECTIONS, default=None, help="where to look (default: both, instances first)"
    )
    get.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    resolve = sub.add_parser("resolve", help="a kind's group, apiVersion, versions, scope and top fields")
    resolve.add_argument("name", help="kind, plural, short name, plural.group, or a phrase")
    resolve.add_argument("--cluster", help="only this cluster's answer, with its apiVersion (default: every cluster's)")
    resolve.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    changes = sub.add_parser("changes", help="what changed, newest first (the change history the controller records)")
    changes.add_argument("query", nargs="?", default=None, help="pick changes by meaning (optional)")
    changes.add_argument("--since", help="from this long ago (30m, 2h, 7d) or this ISO 8601 time")
    changes.add_argument("--until", help="up to this long ago or ISO 8601 time (default: now)")
    changes.add_argument("-n", "--namespace", help="only objects in this namespace")
    changes.add_argument("--kind", help="only this kind, e.g. Deployment")
    changes.add_argument("--name", help="only objects with this name")
    changes.add_argument("--change", choices=["created", "updated", "deleted"], help="only this kind of change")
    changes.add_argument("--cluster", help="only this cluster's objects (several controllers can share a store)")
    changes.add_argument("-k", type=int, default=20, help=f"how many changes (1-{MAX_K}, default 20)")
    changes.add_argument(
        "--cursor", help="the next page of a listing without a query (the cursor the last page printed)"
    )
    changes.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    clusters = sub.add_parser(
        "clusters", help="the clusters whose documents the store holds: documents, last resync, controller version"
    )
    clusters.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text", help="output format")

    forget = sub.add_parser(
        "forget-cluster", help="remove one cluster's documents and its part of shared ones (a decommissioned cluster)"
    )
    forget.add_argument("name", help="the cluster name, as `kubevec clusters` lists it")
    forget.add_argument("--yes", action="store_true", help="remove them (without it: only say what would go)")

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

    bench = sub.add_parser("bench", help="measure what the configured models give, before switching to them")
    bench_sub = sub.nested(bench, dest="what", required=True)
    retrieval = bench_sub.add_parser(
        "retrieval", help="recall@1/@5, MRR and latency of the configured embedder and reranker on judged questions"
    )
    retrieval.add_argument("--crds", nargs="+", type=Path, required=True, help="CRD YAML files or folders")
    retrieval.add_argument(
        "--queries", type=Path, required=True, help='JSON Lines: {"query": "...", "expected": ["<crd name>", ...]}'
    )
    retrieval.add_argument("--no-hybrid", action="store_true", help="dense only (no BM25 fusion)")
    retrieval.add_argument("--no-rerank", action="store_true", help="leave the configured reranker out")
    retrieval.add_argument(
        "--show-misses", type=int, default=5, metavar="N", help="print N questions missed (default 5)"
    )
    retrieval.add_argument("-o", "--output", choices=["text", "json"], default="text", help="text (default) or json")

    describe = sub.add_parser("describe", help="print the capability documents for CRD YAML files")
    describe.add_argument("paths", nargs="+", type=Path, help="CRD YAML files or folders (multi-document OK)")
    describe.add_argument("--json", action="store_true", help="print JSON instead of text")
    describe.add_argument("--cluster", default=None, help="cluster name (default: KUBEVEC_CLUSTER_NAME)")
    return parser


def label_selector(values: Sequence[str]) -> list[str]:
    """``-l a=b,c=d -l e=f`` as kubectl reads it: every ``k=v`` must match."""
    return [label.strip() for value in values for label in value.split(",") if label.strip()]
