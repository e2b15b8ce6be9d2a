"""Embedder and describer settings (plain pydantic models nested in the controller's settings)."""

from __future__ import annotations

import dataclasses
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from kubevec.inference.providers.embedders.base import Embedder

if TYPE_CHECKING:
    from kubevec.inference.providers.embedders.remote import RemoteOptions

Provider = Literal["local", "voyage", "openai", "cohere", "gemini", "bedrock"]


class EmbedderSettings(BaseModel):
    """``KUBEVEC_EMBEDDER__*``: which model turns texts into vectors (docs/models.md says which to pick)."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = Field(
        default="local",
        description="local (offline ONNX: the packaged MiniLM or MODEL_DIR), openai (any /v1/embeddings server), "
        "cohere, gemini, bedrock or voyage",
    )
    model: str | None = Field(default=None, description="the server's model (each provider has a default)")
    api_key: SecretStr | None = Field(default=None, description="API key (none for bedrock: the AWS chain)")
    base_url: str | None = Field(default=None, description="server URL (OpenAI-compatible servers, Azure, proxies)")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="extra HTTP headers, JSON (values never logged)"
    )
    dimension: int | None = Field(default=None, gt=0, description="vector size (sent when the model can reduce)")
    encoding: Literal["float", "base64"] = Field(default="float", description="openai: how vectors travel")
    api_version: str | None = Field(default=None, description="openai: Azure OpenAI's api-version (Azure form)")
    region: str | None = Field(default=None, description="bedrock: AWS region (default: the AWS chain's)")
    model_path: Path | None = Field(default=None, description="local ONNX model file override (packaged tokenizer)")
    model_dir: Path | None = Field(default=None, description="local: a sentence-transformers ONNX model folder")
    model_sha256: str | None = Field(default=None, description="expected sha256 of the local ONNX file")
    pooling: Literal["cls", "mean", "max", "lasttoken"] | None = Field(
        default=None, description="local: pooling when the folder does not say"
    )
    query_prefix: str | None = Field(default=None, description="prepended to queries (e5 'query: ', nomic...)")
    document_prefix: str | None = Field(default=None, description="prepended to documents (e5 'passage: '...)")
    max_input_tokens: int | None = Field(default=None, gt=0, description="servers: clip longer texts (estimated)")
    timeout_seconds: float = Field(default=60.0, gt=0, description="servers: per request")
    max_attempts: int = Field(default=6, ge=1, le=20, description="servers: tries per request (429, 5xx, timeouts)")
    threads: int = Field(default=0, ge=0, description="onnxruntime intra-op threads (0: one per core)")
    batch_size: int = Field(default=32, ge=1, le=1000, description="texts per model call (servers: x4)")
    int8_weights: bool = Field(
        default=False,
        description="local model: keep weights int8 in memory (123 MiB less resident, ~25% fewer texts/s)",
    )

    @model_validator(mode="after")
    def _one_model_source(self) -> EmbedderSettings:
        if self.base_url and _has_userinfo(self.base_url) and (self.api_key is not None or self.headers):
            raise ValueError(
                "base_url holds credentials (user:password@) and api_key or headers are set too: httpx would send "
                "the URL's as Basic auth instead of the key; put the key in api_key and remove it from the URL"
            )
        if self.model_path is not None and self.model_dir is not None:
            raise ValueError("set model_path or model_dir, not both")
        if self.model_dir is not None and not self.model_sha256:
            raise ValueError("model_dir needs model_sha256: the sha256 of its model.onnx (sha256sum model.onnx)")
        return self


class LLMSettings(BaseModel):
    """``KUBEVEC_DESCRIBER__LLM__*``: optional LLM refinement of capability documents and workload notes."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    provider: Literal["anthropic", "openai"] = "anthropic"
    url: str = Field(default="https://api.anthropic.com", description="API base URL (OpenAI-compatible: .../v1)")
    model: str = "claude-haiku-4-5"
    api_key: SecretStr | None = None
    cache_dir: Path = Path(".kubevec/llm-cache")
    requests_per_minute: float = Field(default=30.0, gt=0)
    timeout_seconds: float = Field(default=60.0, gt=0)
    workloads: bool = Field(
        default=False,
        description="also say what each workload's software is, once per pod template (needs enabled)",
    )

    @model_validator(mode="after")
    def _one_credential(self) -> LLMSettings:
        if self.workloads and not self.enabled:
            raise ValueError("workloads=true needs enabled=true: the workload notes are asked of the same LLM")
        if _has_userinfo(self.url) and self.api_key is not None:
            raise ValueError(
                "url holds credentials (user:password@) and api_key is set too: put the key in api_key only"
            )
        return self


def _has_userinfo(url: str) -> bool:
    """Whether ``url`` carries ``user[:password]@`` (httpx turns it into Basic auth, replacing our header)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return False
    return parts.username is not None or parts.password is not None


class DescriberSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    llm: LLMSettings = Field(default_factory=LLMSettings)


def remote_options(settings: EmbedderSettings) -> RemoteOptions:
    """What every embedder behind a server is configured with, read from the settings once."""
    from kubevec.inference.providers.embedders.remote import RemoteOptions

    return RemoteOptions(
        model=settings.model,
        base_url=settings.base_url,
        dimension=settings.dimension,
        batch_size=min(settings.batch_size * 4, 1000),
        max_input_tokens=settings.max_input_tokens,
        query_prefix=settings.query_prefix or "",
        document_prefix=settings.document_prefix or "",
        max_attempts=settings.max_attempts,
        timeout=settings.timeout_seconds,
    )


def make_embedder(settings: EmbedderSettings, *, verified_dir: Path | None = None) -> Embedder:
    """The configured embedder; a local model is loaded (and its sha256 checked) here, once.

    ``verified_dir``: where one-shot commands remember a model file they verified (see
    :func:`kubevec.inference.providers.embedders.local.verify_sha256`); a long-lived process hashes it once anyway.
    """
    key = settings.api_key.get_secret_value() if settings.api_key else None
    headers = {name: value.get_secret_value() for name, value in settings.headers.items()}
    if settings.provider == "openai":
        from kubevec.inference.providers.embedders.openai import OpenAIEmbedder

        return OpenAIEmbedder(
            remote_options(settings),
            api_key=key,
            headers=headers,
            encoding=settings.encoding,
            api_version=settings.api_version,
        )
    if settings.provider == "cohere":
        from kubevec.inference.providers.embedders.cohere import CohereEmbedder

        return CohereEmbedder(remote_options(settings), api_key=key, headers=headers)
    if settings.provider == "gemini":
        from kubevec.inference.providers.embedders.gemini import GeminiEmbedder

        return GeminiEmbedder(remote_options(settings), api_key=key, headers=headers)
    if settings.provider == "bedrock":
        from kubevec.inference.providers.embedders.bedrock import BedrockEmbedder

        return BedrockEmbedder(remote_options(settings), region=settings.region)
    if settings.provider == "voyage":
        from kubevec.inference.providers.embedders.voyage import VoyageEmbedder

        return VoyageEmbedder(remote_options(settings), api_key=key)
    from kubevec.inference.providers.embedders.folder import read_model_folder
    from kubevec.inference.providers.embedders.local import MODEL_SHA256, LocalEmbedder

    folder = None
    if settings.model_dir is not None:
        folder = read_model_folder(
            settings.model_dir,
            pooling=settings.pooling,
            query_prefix=settings.query_prefix,
            document_prefix=settings.document_prefix,
        )
        if settings.dimension is not None:
            folder = dataclasses.replace(folder, dimension=settings.dimension)
    return LocalEmbedder(
        model_path=settings.model_path,
        model_sha256=settings.model_sha256 or MODEL_SHA256,
        threads=settings.threads,
        batch_size=settings.batch_size,
        int8_weights=settings.int8_weights,
        verified_dir=verified_dir,
        folder=folder,
    )
