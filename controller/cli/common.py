"""What the commands share: one-line errors, the store, the embedder, the search service over the active generation."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from kubevec.controller.settings import Settings

if TYPE_CHECKING:
    from kubevec.backends import VectorStore
    from kubevec.inference.providers.config import EmbedderSettings
    from kubevec.inference.providers.embedders.base import Embedder
    from kubevec.query.search import SearchService

logger = logging.getLogger("kubevec")


class CommandError(RuntimeError):
    """A failure to report on one line, with a non-zero exit and no traceback."""


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

    local = settings.store.path if settings.store.backend in ("chroma", "qdrant") and not settings.store.url else None
    if existing and local is not None and not local.exists():
        raise CommandError(
            f"the {settings.store.backend} store at {local} does not exist: index one first (kubevec run or kubevec index crds), "
            "or point KUBEVEC_STORE__PATH at it"
        )
    return open_store(settings.store)


def open_embedder(settings: Settings) -> Embedder:
    from kubevec.inference.providers.config import make_embedder
    from kubevec.inference.providers.embedders.base import EmbedderError

    try:
        return make_embedder(settings.embedder, verified_dir=verified_dir(settings))
    except EmbedderError as exc:
        raise CommandError(str(exc)) from exc


def verified_dir(settings: Settings) -> Path:
    """Where one-shot commands remember the model files they verified (sha256 once per file identity)."""
    return settings.cache_dir / "verified-models"


def search_service(
    settings: Settings, store: VectorStore, *, embedder: bool = False, one_shot: bool = True
) -> SearchService:
    """A reader of the active generation's collections, with that generation's model for queries.

    The embedder is loaded only when a query needs it; after a migration to another model (see
    ``kubevec migrate``), queries are embedded with the model that built the collections read.
    ``one_shot`` (a command that embeds one query and exits): the local model keeps its int8
    weights, which loads 0.18 s faster and costs ~56 ms on that one query (the same vector); a
    server (``kubevec mcp``) folds them once and embeds each query in ~6 ms.
    """
    from kubevec.backends.generations import Generation
    from kubevec.controller.sync.migrate import active_collections
    from kubevec.query.search import SearchService

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
            loaded[key] = LazyEmbedder(wanted, verified_dir=verified_dir(settings) if one_shot else None)
        return loaded[key]

    async def refresh() -> tuple[Mapping[str, str], Embedder | None]:
        names, generation = await active_collections(store, settings=settings)
        return names, embedder_for(generation)

    reranker = None
    if embedder:
        from kubevec.inference.providers.embedders.base import EmbedderError
        from kubevec.inference.providers.rerank import make_reranker

        try:
            reranker = make_reranker(
                settings.reranker, api_key=settings.embedder.api_key, base_url=settings.embedder.base_url
            )
        except EmbedderError as exc:
            raise CommandError(str(exc)) from exc
    from kubevec.query.lexical import LexicalIndex

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


class LazyEmbedder:
    """The configured embedder, loaded only if an exact name lookup finds nothing (the model takes a second)."""

    def __init__(self, settings: EmbedderSettings, *, verified_dir: Path | None = None) -> None:
        self._settings = settings
        self.verified_dir = verified_dir
        self._embedder: Embedder | None = None

    def _load(self) -> Embedder:
        if self._embedder is None:
            from kubevec.inference.providers.config import make_embedder
            from kubevec.inference.providers.embedders.base import EmbedderError

            try:
                self._embedder = make_embedder(self._settings, verified_dir=self.verified_dir)
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
