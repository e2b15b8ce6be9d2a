"""``kubevec search``, ``get``, ``resolve``, ``related``, ``facets`` and ``changes``: the reading commands."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import Commands, document_text, emit, output_flag, reading
from kubevec.controller.cli.request_flags import add_request_flags, request_fields
from kubevec.core.errors import CommandError
from kubevec.inference.collections import COLLECTIONS
from kubevec.query.request import MAX_K, SearchRequest

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings


def register(commands: Commands) -> None:
    search = commands.add("search", search_command, help="search the capabilities or instances collection")
    where = search.add_mutually_exclusive_group()
    add_request_flags(search, SearchRequest, into={"namespace": where})
    where.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace (the default)")
    search.add_argument(
        "-o",
        "--output",
        choices=["text", "wide", "json", "yaml", "name"],
        default="text",
        help="text (compact, within a token budget), wide (whole texts), json, yaml, or name (ids only)",
    )
    search.add_argument("--json", action="store_true", help="the same as -o json")

    get = commands.add("get", get_command, help="print one stored document (text and metadata) by its id")
    get.add_argument("id", help="a document id, as search prints it (a capability also by plural.group)")
    get.add_argument("--cluster", help="as this cluster serves it (capabilities several clusters share)")
    get.add_argument(
        "--collection", choices=COLLECTIONS, default=None, help="where to look (default: both, instances first)"
    )
    output_flag(get)

    resolve = commands.add(
        "resolve", resolve_command, help="a kind's group, apiVersion, versions, scope and top fields"
    )
    resolve.add_argument("name", help="kind, plural, short name, plural.group, or a phrase")
    resolve.add_argument("--cluster", help="only this cluster's answer, with its apiVersion (default: every cluster's)")
    output_flag(resolve)

    changes = commands.add(
        "changes", changes_command, help="what changed, newest first (the change history the controller records)"
    )
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
    output_flag(changes)

    related = commands.add(
        "related", related_command, help="what an object references and what references it (from the index)"
    )
    related.add_argument("id", help="an instance id as search prints it, or Kind/namespace/name (Kind/_cluster/name)")
    related.add_argument("--hops", type=int, default=1, help="1 (default) to 3; later hops keep the direction")
    related.add_argument(
        "--direction",
        choices=["out", "in", "both"],
        default="both",
        help="out: what it uses; in: what uses it (what breaks if it goes); both (default)",
    )
    related.add_argument("--cluster", help="the cluster_name the object belongs to (default: any)")
    output_flag(related)

    facets = commands.add("facets", facets_command, help="distinct values of a metadata field with their counts")
    facets.add_argument("field", help="kind, group, namespace, labels, scope, capabilities, providers ...")
    facets.add_argument("--collection", choices=COLLECTIONS, default="instances", help="which collection")
    facets.add_argument("--limit", type=int, default=100, help="most frequent values to print (default 100)")
    facets.add_argument("--cluster", help="only this cluster's documents")
    output_flag(facets)


async def search_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.inference.fleet import is_shared
    from kubevec.query.render import DEFAULT_TOKEN_BUDGET, as_json, compact, summary

    request = SearchRequest.build(**request_fields(args, SearchRequest))
    async with reading(settings, embedder=request.query is not None) as service:
        results = await service.search(request)
    if results.degraded:
        print(f"kubevec search: warning: {results.degraded}", file=sys.stderr)
    output = "json" if args.json else args.output
    if output == "json":
        print(as_json(results))
    elif output == "yaml":
        import yaml

        answer = {"results": [r.to_json() for r in results], **results.meta()}
        print(yaml.safe_dump(answer, sort_keys=False, allow_unicode=True), end="")
    elif output == "name":
        if results:  # a capability by its resource name (plural.group), as kubectl and `kubevec get` take it
            names = [str(r.metadata.get("resource", r.id)) if is_shared(r.id) else r.id for r in results]
            print("\n".join(dict.fromkeys(names)))
        if footer := summary(results):  # ids only on stdout, for pipes
            print(footer, file=sys.stderr)
    else:
        print(compact(results, token_budget=None if output == "wide" else DEFAULT_TOKEN_BUDGET))
    return 0


async def get_command(args: argparse.Namespace, settings: Settings) -> int:
    """One document by id, from the collection named or from both (the id says which, but not always to us)."""
    async with reading(settings) as service:
        found = await service.find_document(args.id, collection=args.collection, cluster=args.cluster)
    if found is not None:
        result, collection = found
        document = {"id": result.id, "collection": collection, "metadata": dict(result.metadata)}
        emit(args.output, {**document, "text": result.text}, text=document_text(document, result.text))
        return 0
    where = args.collection or "instances or capabilities"
    raise CommandError(f"no document {args.id!r} in {where}; ids are what `kubevec search` prints")


async def resolve_command(args: argparse.Namespace, settings: Settings) -> int:
    async with reading(settings, embedder=True) as service:
        answers = await service.resolve_kind(args.name, cluster=args.cluster)
    if not answers:
        raise CommandError(f"no resource type matches {args.name!r}")
    lines = [
        f"{a['kind']}  {a['apiVersion']}  resource={a['resource']}  scope={a['scope']}  cluster={a['cluster']}  "
        f"served={','.join(a['servedVersions'])}  short={','.join(a['shortNames']) or '-'}  [{a['match']}"
        + (f" {a['similarity']:.2f}]" if "similarity" in a else "]")
        for a in answers
    ]
    emit(args.output, answers, text="\n".join(lines))
    return 0


async def related_command(args: argparse.Namespace, settings: Settings) -> int:
    async with reading(settings) as service:
        answer = await service.related(args.id, hops=args.hops, direction=args.direction, cluster=args.cluster)
    emit(args.output, answer.to_json(), text="\n".join(answer.lines()))
    return 0


async def facets_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    async with reading(settings) as service:
        counts = await service.facets(args.collection, args.field, limit=args.limit, cluster=args.cluster)
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = [f"{count:>{width}}  {value}" for value, count in counts.items()]
    emit(args.output, counts, text="\n".join(lines) if lines else f"(no document has a {args.field!r} field)")
    return 0


async def changes_command(args: argparse.Namespace, settings: Settings) -> int:
    """``kubevec changes``: the change history, newest first."""
    from kubevec.query.changes import ChangesRequest, parse_time

    async with reading(settings, embedder=bool(args.query) and settings.history.embed) as service:
        request = ChangesRequest(
            query=args.query,
            since=parse_time(args.since) if args.since else None,
            until=parse_time(args.until) if args.until else None,
            namespace=args.namespace,
            kind=args.kind,
            name=args.name,
            cluster=args.cluster,
            change=args.change,
            k=args.k,
            cursor=args.cursor,
        )
        answer = await service.changes(request)
    if answer.degraded:
        print(f"kubevec changes: note: {answer.degraded}", file=sys.stderr)
    emit(args.output, answer.to_json(), text="\n".join(answer.lines()))
    return 0
