"""Store settings: a plain pydantic model, nested into the controller's one settings object."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class StoreSettings(BaseModel):
    """``KUBEVEC_STORE__*``: which vector database, where, and how collections are named."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["chroma", "qdrant", "memory"] = Field(
        default="chroma", description="chroma (default, embedded), qdrant, or memory (tests only)"
    )
    path: Path | None = Field(
        default=Path(".kubevec/chroma"),
        description="embedded Chroma directory or Qdrant local-mode directory; ignored when url is set",
    )
    url: str | None = Field(default=None, description="server URL, e.g. http://chroma:8000 or http://qdrant:6333")
    api_key: SecretStr | None = Field(default=None, description="Qdrant API key (server mode)")
    headers: dict[str, str] = Field(default_factory=dict, description="extra HTTP headers for a Chroma server")
    collection_prefix: str = Field(default="", description="prefix for the capabilities/instances collections")
    timeout_seconds: float = Field(default=30.0, gt=0)
