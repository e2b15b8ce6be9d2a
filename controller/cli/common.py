"""What the commands share: one-line errors, the store, the embedder, the search service (see ``serving``)."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from kubevec.controller.settings import Settings
from kubevec.core.errors import CommandError, EmbedderError

if TYPE_CHECKING:
    from kubevec.backends import VectorStore
    from kubevec.inference.providers.embedders.base import Embedder
    from kubevec.query.search import SearchService

logger = logging.getLogger("kubevec")


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


def open_store(settings: Settings, *, existing: bool = False) -> VectorStore:
    """The configured store; ``existing``: readers refuse to create a local store that is not there."""
    from kubevec.backends.factory import open_store

    local = settings.store.local_path
    if existing and local is not None and not local.exists():
        raise CommandError(
            f"the {settings.store.backend} store at {local} does not exist: index one first (kubevec run or kubevec index crds), "
            "or point KUBEVEC_STORE__PATH at it"
        )
    return open_store(settings.store)


def open_embedder(settings: Settings) -> Embedder:
    from kubevec.controller.serving import verified_dir
    from kubevec.inference.providers.config import make_embedder

    try:
        return make_embedder(settings.embedder, verified_dir=verified_dir(settings))
    except EmbedderError as exc:
        raise CommandError(str(exc)) from exc


def search_service(
    settings: Settings, store: VectorStore, *, embedder: bool = False, one_shot: bool = True
) -> SearchService:
    """:func:`kubevec.controller.serving.search_service` for a command; ``embedder``: it embeds queries."""
    from kubevec.controller.serving import search_service

    try:
        return search_service(settings, store, queries=embedder, one_shot=one_shot)
    except EmbedderError as exc:  # a reranker that cannot be built: one line, as every command's errors
        raise CommandError(str(exc)) from exc


def document_text(document: dict[str, Any], text: str) -> str:
    lines = [f"id: {document['id']}", f"collection: {document['collection']}"]
    lines += [
        f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}"
        for key, value in sorted(document["metadata"].items())
    ]
    return "\n".join([*lines, "", text])


def emit(output: str, data: Any, *, text: str) -> None:
    if output == "json":
        print(json.dumps(data, indent=2, sort_keys=True))
    elif output == "yaml":
        import yaml

        print(yaml.safe_dump(data, sort_keys=True, allow_unicode=True), end="")
    else:
        print(text)
