"""Cohere's embed API (v2: embed-v4.0, embed-english-v3.0...), and servers that speak it.

``input_type`` tells the model which side of a search a text is on: ``search_document`` for what
is stored, ``search_query`` for a question; both are sent as Cohere asks. ``truncate=END`` lets the
server cut what is still too long after the clipping here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import httpx

from kubevec.inference.providers.embedders.remote import (
    HttpCalls,
    Kind,
    RemoteEmbedder,
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
    max_request_tokens = 120_000

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        headers: Mapping[str, str] | None = None,
        batch_size: int = 96,
        max_input_tokens: int = 512,
        query_prefix: str = "",
        document_prefix: str = "",
        max_attempts: int = 6,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        model = model or DEFAULT_MODEL
        key = require(api_key, what="an API key", setting="KUBEVEC_EMBEDDER__API_KEY", provider=self.provider)
        self._http = HttpCalls(
            provider=self.provider,
            base_url=base_url or DEFAULT_URL,
            headers={**(headers or {}), "Authorization": f"Bearer {key}"},
            secrets=[key],
            what=f"model={model}",
            max_attempts=max_attempts,
            timeout=timeout,
            transport=transport,
        )
        super().__init__(
            calls=self._http,
            model=model,
            dimension=dimension,
            batch_size=batch_size,
            max_input_tokens=max_input_tokens,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
        )

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
