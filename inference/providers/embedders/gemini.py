"""Google's Gemini embeddings (``gemini-embedding-001``) through the Generative Language API.

One ``batchEmbedContents`` call per batch, with the task type for each side of a search
(``RETRIEVAL_DOCUMENT``, ``RETRIEVAL_QUERY``) and ``outputDimensionality`` when a smaller size is
asked for; vectors at a reduced size are not unit length from the API and are normalised here.
The key goes in the ``x-goog-api-key`` header, never in the URL.
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

DEFAULT_URL: Final = "https://generativelanguage.googleapis.com/v1beta"
DEFAULT_MODEL: Final = "gemini-embedding-001"
KNOWN_DIMENSIONS: Final = {"gemini-embedding-001": 3072, "text-embedding-004": 768}
TASK_TYPES: Final = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class GeminiEmbedder(RemoteEmbedder):
    provider = "gemini"
    known_dimensions = KNOWN_DIMENSIONS
    max_texts = 100  # batchEmbedContents' cap
    max_request_tokens = 100_000

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        headers: Mapping[str, str] | None = None,
        batch_size: int = 100,
        max_input_tokens: int = 2048,
        query_prefix: str = "",
        document_prefix: str = "",
        max_attempts: int = 6,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        model = (model or DEFAULT_MODEL).removeprefix("models/")
        key = require(api_key, what="an API key", setting="KUBEVEC_EMBEDDER__API_KEY", provider=self.provider)
        self._http = HttpCalls(
            provider=self.provider,
            base_url=base_url or DEFAULT_URL,
            headers={**(headers or {}), "x-goog-api-key": key},
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
        requests: list[dict[str, Any]] = []
        for text in texts:
            request: dict[str, Any] = {
                "model": f"models/{self.model}",
                "content": {"parts": [{"text": text}]},
                "taskType": TASK_TYPES[kind],
            }
            if self.sent_dimension is not None:
                request["outputDimensionality"] = self.sent_dimension
            requests.append(request)
        answer = await self._http.post(f"/models/{self.model}:batchEmbedContents", {"requests": requests})
        try:
            return [list(item["values"]) for item in answer["embeddings"]]
        except (KeyError, TypeError) as exc:
            raise self.malformed("embeddings[].values", exc) from None
