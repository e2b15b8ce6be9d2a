"""Google's Gemini embeddings (``gemini-embedding-001``) through the Generative Language API.

One ``batchEmbedContents`` call per batch, with the task type for each side of a search
(``RETRIEVAL_DOCUMENT``, ``RETRIEVAL_QUERY``) and ``outputDimensionality`` when a smaller size is
asked for; vectors at a reduced size are not unit length from the API and are normalised here.
The key goes in the ``x-goog-api-key`` header, never in the URL.
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

DEFAULT_URL: Final = "https://generativelanguage.googleapis.com/v1beta"
DEFAULT_MODEL: Final = "gemini-embedding-001"
KNOWN_DIMENSIONS: Final = {"gemini-embedding-001": 3072, "text-embedding-004": 768}
TASK_TYPES: Final = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class GeminiEmbedder(RemoteEmbedder):
    provider = "gemini"
    known_dimensions = KNOWN_DIMENSIONS
    max_texts = 100  # batchEmbedContents' cap
    default_batch_size = 100
    default_max_input_tokens = 2048
    max_request_tokens = 100_000

    def __init__(
        self,
        options: RemoteOptions = DEFAULT_OPTIONS,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        model = (options.model or DEFAULT_MODEL).removeprefix("models/")
        key = require(api_key, what="an API key", setting="KUBEVEC_EMBEDDER__API_KEY", provider=self.provider)
        self._http = HttpCalls.of(
            options,
            provider=self.provider,
            base_url=options.base_url or DEFAULT_URL,
            headers={**(headers or {}), "x-goog-api-key": key},
            secret=key,
            what=f"model={model}",
        )
        super().__init__(calls=self._http, model=model, options=options)

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
