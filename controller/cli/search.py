"""``kubevec search``, ``get``, ``resolve``, ``related``, ``facets`` and ``changes``: the reading commands.

One command per tool of the table (``kubevec.query.tools.TOOLS``): its name and help line from the
table, its flags from the tool's declared request (``request_flags``). A command written out here
(:data:`WRITTEN`) prints its answer its own way; a tool without one is a generated command that prints
the answer as JSON, YAML or indented JSON text.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from kubevec.controller.cli.common import Commands, Handler, Parser, document_text, emit, output_flag, reading
from kubevec.core.errors import CommandError
from kubevec.query import tool_commands

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings


def register(commands: Commands) -> None:
    """A command per tool: the written ones in the order ``kubevec --help`` has listed them, then any other.

    Their flags are added when the command is parsed: they come from the tools' requests (pydantic
    models), which ``kubevec --help`` has no need to import.
    """
    order = list(WRITTEN)
    listed = tool_commands.COMMANDS
    for command in sorted(listed, key=lambda c: order.index(c) if c in order else len(order)):
        handler, flags = WRITTEN.get(command, (generated_command, None))
        commands.add(command, handler, help=listed[command], flags=flags or functools.partial(request_flags, command))


def request_flags(command: str, parser: Parser) -> None:
    """``command``'s flags from its tool's declared request, and ``-o``."""
    from kubevec.controller.cli.request_flags import add_request_flags
    from kubevec.query import tools

    add_request_flags(parser, tools.by_command(command).request)
    output_flag(parser)


def search_flags(search: Parser) -> None:
    from kubevec.controller.cli.request_flags import add_request_flags
    from kubevec.query.request import SearchRequest

    where = search.exclusive()
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


def given(args: argparse.Namespace, model: type[Any]) -> Any:
    """The request the flags give, the model's defaults for the rest; checked where it always was (the reader)."""
    from kubevec.controller.cli.request_flags import request_fields

    return model.model_construct(**request_fields(args, model))


def built(args: argparse.Namespace, model: type[Any]) -> Any:
    """The request the flags give, validated (every problem in one line)."""
    from kubevec.controller.cli.request_flags import request_fields
    from kubevec.query import tools

    return tools.build(model, request_fields(args, model))


async def generated_command(args: argparse.Namespace, settings: Settings) -> int:
    """A tool no command here presents: its request from the flags, its answer as data."""
    from kubevec.query import tools

    tool = tools.by_command(args.command)
    request = built(args, tool.request)
    async with reading(settings) as service:
        answer = await service.scoped(None).read(tool, request)
    data = answer.to_json() if hasattr(answer, "to_json") else answer
    emit(args.output, data, text=json.dumps(data, indent=2, ensure_ascii=False, default=str))
    return 0


async def search_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.controller.cli.request_flags import request_fields
    from kubevec.inference.fleet import is_shared
    from kubevec.query.render import DEFAULT_TOKEN_BUDGET, as_json, compact, summary
    from kubevec.query.request import SearchRequest

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
    from kubevec.query.tool_requests import DocumentRequest

    asked: DocumentRequest = given(args, DocumentRequest)
    async with reading(settings) as service:
        found = await service.find_document(asked.id, collection=asked.collection, cluster=asked.cluster)
    if found is not None:
        result, collection = found
        document = {"id": result.id, "collection": collection, "metadata": dict(result.metadata)}
        emit(args.output, {**document, "text": result.text}, text=document_text(document, result.text))
        return 0
    where = asked.collection or "instances or capabilities"
    raise CommandError(f"no document {asked.id!r} in {where}; ids are what `kubevec search` prints")


async def resolve_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.query.tool_requests import KindRequest

    asked: KindRequest = given(args, KindRequest)
    async with reading(settings, embedder=True) as service:
        answers = await service.resolve_kind(asked.name, cluster=asked.cluster)
    if not answers:
        raise CommandError(f"no resource type matches {asked.name!r}")
    lines = [
        f"{a['kind']}  {a['apiVersion']}  resource={a['resource']}  scope={a['scope']}  cluster={a['cluster']}  "
        f"served={','.join(a['servedVersions'])}  short={','.join(a['shortNames']) or '-'}  [{a['match']}"
        + (f" {a['similarity']:.2f}]" if "similarity" in a else "]")
        for a in answers
    ]
    emit(args.output, answers, text="\n".join(lines))
    return 0


async def related_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.query.tool_requests import RelatedRequest

    asked: RelatedRequest = given(args, RelatedRequest)
    async with reading(settings) as service:
        answer = await service.related(asked.id, hops=asked.hops, direction=asked.direction, cluster=asked.cluster)
    emit(args.output, answer.to_json(), text="\n".join(answer.lines()))
    return 0


async def facets_command(args: argparse.Namespace, settings: Settings) -> int:
    from kubevec.query.tool_requests import FacetsRequest

    asked: FacetsRequest = given(args, FacetsRequest)
    if asked.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {asked.limit}")
    async with reading(settings) as service:
        counts = await service.facets(asked.collection, asked.field, limit=asked.limit, cluster=asked.cluster)
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = [f"{count:>{width}}  {value}" for value, count in counts.items()]
    emit(args.output, counts, text="\n".join(lines) if lines else f"(no document has a {asked.field!r} field)")
    return 0


async def changes_command(args: argparse.Namespace, settings: Settings) -> int:
    """``kubevec changes``: the change history, newest first."""
    from kubevec.query.changes import ChangesRequest

    request = built(args, ChangesRequest)
    async with reading(settings, embedder=bool(request.query) and settings.history.embed) as service:
        answer = await service.changes(request)
    if answer.degraded:
        print(f"kubevec changes: note: {answer.degraded}", file=sys.stderr)
    emit(args.output, answer.to_json(), text="\n".join(answer.lines()))
    return 0


#: The commands written out here, in the order ``kubevec --help`` lists them: each its handler, and
#: what adds its flags (None: its request's flags and ``-o``).
WRITTEN: Final[Mapping[str, tuple[Handler, Callable[[Parser], None] | None]]] = {
    "search": (search_command, search_flags),
    "get": (get_command, None),
    "resolve": (resolve_command, None),
    "changes": (changes_command, None),
    "related": (related_command, None),
    "facets": (facets_command, None),
}
