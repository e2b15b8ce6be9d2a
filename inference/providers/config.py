"""Embedder and describer settings (plain pydantic models nested in the controller's settings)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from kubevec.inference.providers.embedders.base import Embedder


class EmbedderSettings(BaseModel):
    """``KUBEVEC_EMBEDDER__*``: which model turns texts into vectors."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["local", "voyage"] = Field(default="local", description="local (offline ONNX) or voyage")
    model: str | None = Field(default=None, description="Voyage model (default voyage-4); ignored for local")
    api_key: SecretStr | None = Field(default=None, description="Voyage API key")
    base_url: str | None = Field(default=None, description="Voyage API base URL override")
    dimension: int | None = Field(default=None, gt=0, description="output dimension override (Voyage)")
    model_path: Path | None = Field(default=None, description="local ONNX model file override")
    model_sha256: str | None = Field(default=None, description="expected sha256 of model_path")
    threads: int = Field(default=0, ge=0, description="onnxruntime intra-op threads (0: one per core)")
    batch_size: int = Field(default=32, ge=1, le=1000, description="texts per model call")
    int8_weights: bool = Field(
        default=False,
        description="local model: keep weights int8 in memory (123 MiB less resident, ~25% fewer texts/s)",
    )


class LLMSettings(BaseModel):
    """``KUBEVEC_DESCRIBER__LLM__*``: optional LLM refinement of capability documents."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    provider: Literal["anthropic", "openai"] = "anthropic"
    url: str = Field(default="https://api.anthropic.com", description="API base URL (OpenAI-compatible: .../v1)")
    model: str = "claude-haiku-4-5"
    api_key: SecretStr | None = None
    cache_dir: Path = Path(".kubevec/llm-cache")
    requests_per_minute: float = Field(default=30.0, gt=0)
    timeout_seconds: float = Field(default=60.0, gt=0)


class DescriberSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    llm: LLMSettings = Field(default_factory=LLMSettings)


def make_embedder(settings: EmbedderSettings, *, verified_dir: Path | None = None) -> Embedder:
    """The configured embedder; the local model is loaded (and its sha256 checked) here, once.

    ``verified_dir``: where one-shot commands remember a model file they verified (see
    :func:`kubevec.inference.providers.embedders.local.verify_sha256`); a long-lived process hashes it once anyway.
    """
    if settings.provider == "voyage":
        from kubevec.inference.providers.embedders.voyage import DEFAULT_MODEL, VoyageEmbedder

        return VoyageEmbedder(
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            model=settings.model or DEFAULT_MODEL,
            dimension=settings.dimension,
            base_url=settings.base_url,
            batch_size=min(settings.batch_size * 4, 1000),
        )
    from kubevec.inference.providers.embedders.local import MODEL_SHA256, LocalEmbedder

    return LocalEmbedder(
        model_path=settings.model_path,
        model_sha256=settings.model_sha256 or MODEL_SHA256,
        threads=settings.threads,
        batch_size=settings.batch_size,
        int8_weights=settings.int8_weights,
        verified_dir=verified_dir,
    )
