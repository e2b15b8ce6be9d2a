"""Any server speaking OpenAI's ``POST /v1/embeddings``.

OpenAI itself, Azure OpenAI (``KUBEVEC_EMBEDDER__API_VERSION`` set: the deployment form, an
``api-key`` header), text-embeddings-inference, Ollama, vLLM, LiteLLM, LocalAI. The request is
``{"model", "input": [...], "encoding_format"}`` plus ``dimensions`` when set; the answer's
``data[].index`` puts the rows back in order (a server may return them in any).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.embedders.remote import (
    DEFAULT_OPTIONS,
    HttpCalls,
    Kind,
    RemoteEmbedder,
    RemoteOptions,
    floats_from_base64,
)

DEFAULT_URL: Final = "https://api.openai.com/v1"
DEFAULT_MODEL: Final = "text-embedding-3-small"
KNOWN_DIMENSIONS: Final = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder(RemoteEmbedder):
    provider = "openai"
    known_dimensions = KNOWN_DIMENSIONS
    max_texts = 2048  # OpenAI's cap; TEI's default is 32, found out from its 413 (see remote.py)
    max_request_tokens = 250_000  # OpenAI allows 300k tokens per request

    def __init__(
        self,
        options: RemoteOptions = DEFAULT_OPTIONS,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        encoding: Literal["float", "base64"] = "float",
        api_version: str | None = None,
    ) -> None:
        model = options.model or DEFAULT_MODEL
        base_url = options.base_url
        sent: dict[str, str] = dict(headers or {})
        if api_version:  # Azure OpenAI: the deployment is in the path, the key in its own header
            if not base_url:
                raise EmbedderError(
                    "Azure OpenAI needs its endpoint: set KUBEVEC_EMBEDDER__BASE_URL "
                    "(https://<resource>.openai.azure.com)",
                    reason="config",
                )
            root = f"{base_url.rstrip('/')}/openai/deployments/{model}"
            self._params: dict[str, str] = {"api-version": api_version}
            if api_key:
                sent["api-key"] = api_key
        else:
            root = base_url or DEFAULT_URL
            self._params = {}
            if api_key:
                sent["Authorization"] = f"Bearer {api_key}"
            elif base_url is None:
                raise EmbedderError(
                    "OpenAI needs an API key: set KUBEVEC_EMBEDDER__API_KEY (a local server: set "
                    "KUBEVEC_EMBEDDER__BASE_URL, a key is then optional)",
                    reason="config",
                )
        self._http = HttpCalls.of(
            options, provider=self.provider, base_url=root, headers=sent, secret=api_key or "", what=f"model={model}"
        )
        super().__init__(calls=self._http, model=model, options=options)
        self._encoding = encoding

    async def call_batch(self, texts: list[str], *, kind: Kind) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": self._encoding}
        if self.sent_dimension is not None:
            body["dimensions"] = self.sent_dimension
        answer = await self._http.post("/embeddings", body, params=self._params or None)
        try:
            rows = sorted(answer["data"], key=lambda item: int(item["index"]))
            return [
                floats_from_base64(r["embedding"]) if isinstance(r["embedding"], str) else r["embedding"] for r in rows
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise self.malformed("data[].embedding/index", exc) from None
