"""Cohere's embed API (v2: embed-v4.0, embed-english-v3.0...), and servers that speak it.

``input_type`` tells the model which side of a search a text is on: ``search_document`` for what
is stored, ``search_query`` for a question; both are sent as Cohere asks. ``truncate=END`` lets the
server cut what is still too long after the clipping here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubevec.inference.providers.embedders.remote import (
    DEFAULT_OPTIONS,
    HttpCalls,
    Kind,
    RemoteEmbedder,
    RemoteOptions,
    require,
)

DEFAULT_URL: Final = "https://api.cohere.com"
DEFAULT_MODEL: Final = "embed-v4.0"
KNOWN_DIMENSIONS: Final = {
    "embed-v4.0": 1536,
    "embed-english-v3.0": 1024,
    "embed-multilingual-v3.0": 1024,
    "embed-english-light-v3.0": 384,
    "embed-multilingual-light-v3.0": 384,
}
INPUT_TYPES: Final = {"document": "search_document", "query": "search_query"}


class CohereEmbedder(RemoteEmbedder):
    provider = "cohere"
    known_dimensions = KNOWN_DIMENSIONS
    max_texts = 96  # Cohere's cap per request
    default_batch_size = 96
    default_max_input_tokens = 512
    max_request_tokens = 120_000

    def __init__(
        self,
        options: RemoteOptions = DEFAULT_OPTIONS,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        model = options.model or DEFAULT_MODEL
        key = require(api_key, what="an API key", setting="KUBEVEC_EMBEDDER__API_KEY", provider=self.provider)
        self._http = HttpCalls.of(
            options,
            provider=self.provider,
            base_url=options.base_url or DEFAULT_URL,
            headers={**(headers or {}), "Authorization": f"Bearer {key}"},
            secret=key,
            what=f"model={model}",
        )
        super().__init__(calls=self._http, model=model, options=options)

    async def call_batch(self, texts: list[str], *, kind: Kind) -> list[list[float]]:
        body: dict[str, Any] = {
            "model": self.model,
            "texts": texts,
            "input_type": INPUT_TYPES[kind],
            "embedding_types": ["float"],
            "truncate": "END",
        }
        if self.sent_dimension is not None:
            body["output_dimension"] = self.sent_dimension
        answer = await self._http.post("/v2/embed", body)
        try:
            embeddings = answer["embeddings"]
            rows = embeddings["float"] if isinstance(embeddings, dict) else embeddings  # v2, or v1's plain list
            return [list(row) for row in rows]
        except (KeyError, TypeError) as exc:
            raise self.malformed("embeddings.float", exc) from None
