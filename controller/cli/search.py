"""``kubevec search``, ``get``, ``resolve``, ``related`` and ``facets``: the reading commands."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from kubevec.controller.cli.common import document_text, emit, open_store, search_service
from kubevec.controller.cli.parser import label_selector
from kubevec.controller.settings import Settings
from kubevec.core.errors import CommandError

if TYPE_CHECKING:
    pass

logger = logging.getLogger("kubevec")


async def search_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.backends.filters import load_json_text
    from kubevec.core.errors import BackendError, EmbedderError, InvalidFilter, SearchError
    from kubevec.inference.fleet import is_shared
    from kubevec.query.render import DEFAULT_TOKEN_BUDGET, as_json, compact, summary
    from kubevec.query.request import SearchRequest

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
            cursor=args.cursor,
            count_by=args.count_by,
        )
    except SearchError as exc:
        raise CommandError(str(exc)) from exc
    store = open_store(settings, existing=True)
    service = search_service(settings, store, embedder=request.query is not None)
    try:
        results = await service.search(request)
    except (SearchError, BackendError, EmbedderError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
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
    from kubevec.core.errors import BackendError, SearchError

    store = open_store(settings, existing=True)
    service = search_service(settings, store)
    try:
        found = await service.find_document(args.id, collection=args.collection, cluster=args.cluster)
    except (SearchError, BackendError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    if found is not None:
        result, collection = found
        document = {"id": result.id, "collection": collection, "metadata": dict(result.metadata)}
        emit(args.output, {**document, "text": result.text}, text=document_text(document, result.text))
        return 0
    where = args.collection or "instances or capabilities"
    raise CommandError(f"no document {args.id!r} in {where}; ids are what `kubevec search` prints")


async def resolve_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.core.errors import BackendError, EmbedderError, SearchError

    store = open_store(settings, existing=True)
    service = search_service(settings, store, embedder=True)
    try:
        answers = await service.resolve_kind(args.name, cluster=args.cluster)
    except (SearchError, BackendError, EmbedderError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
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
    from kubevec.core.errors import BackendError, SearchError

    store = open_store(settings, existing=True)
    service = search_service(settings, store)
    try:
        answer = await service.related(args.id, hops=args.hops, direction=args.direction, cluster=args.cluster)
    except (SearchError, BackendError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    emit(args.output, answer.to_json(), text="\n".join(answer.lines()))
    return 0


async def facets_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.core.errors import BackendError, SearchError

    if args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    store = open_store(settings, existing=True)
    service = search_service(settings, store)
    try:
        counts = await service.facets(args.collection, args.field, limit=args.limit, cluster=args.cluster)
    except (SearchError, BackendError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = [f"{count:>{width}}  {value}" for value, count in counts.items()]
    emit(args.output, counts, text="\n".join(lines) if lines else f"(no document has a {args.field!r} field)")
    return 0


async def changes_command(args: argparse.Namespace, settings: Settings) -> int:
    """``kubevec changes``: the change history, newest first."""
    from kubevec.core.errors import BackendError, EmbedderError, SearchError
    from kubevec.query.changes import ChangesRequest, parse_time

    store = open_store(settings, existing=True)
    service = search_service(settings, store, embedder=bool(args.query) and settings.history.embed)
    try:
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
    except (SearchError, BackendError, EmbedderError) as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    finally:
        await store.close()
    if answer.degraded:
        print(f"kubevec changes: note: {answer.degraded}", file=sys.stderr)
    emit(args.output, answer.to_json(), text="\n".join(answer.lines()))
    return 0
