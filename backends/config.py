"""Store settings: a plain pydantic model, nested into the controller's one settings object."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class StoreSettings(BaseModel):
    """``KUBEVEC_STORE__*``: which vector database, where, and how collections are named."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["chroma", "qdrant", "pgvector", "lancedb", "memory"] = Field(
        default="chroma",
        description="chroma (default, embedded), qdrant, pgvector (PostgreSQL), lancedb (embedded, on disk), "
        "or memory (tests only)",
    )
    path: Path | None = Field(
        default=Path(".kubevec/chroma"),
        description="embedded Chroma, Qdrant local-mode or LanceDB directory; ignored when url is set",
    )
    url: str | None = Field(
        default=None,
        description="server URL, e.g. http://chroma:8000, http://qdrant:6333 or postgresql://kubevec@db:5432/kubevec",
    )
    api_key: SecretStr | None = Field(default=None, description="Qdrant API key (server mode)")
    password: SecretStr | None = Field(
        default=None, description="PostgreSQL password (pgvector); keeps it out of the url, from a Secret"
    )
    headers: dict[str, str] = Field(default_factory=dict, description="extra HTTP headers for a Chroma server")
    collection_prefix: str = Field(default="", description="prefix for the capabilities/instances collections")
    timeout_seconds: float = Field(default=30.0, gt=0)

    @property
    def local_path(self) -> Path | None:
        """The directory of an embedded store (Chroma or Qdrant without a url, LanceDB), else None."""
        if self.backend == "lancedb" or (self.backend in ("chroma", "qdrant") and not self.url):
            return self.path
        return None

    @model_validator(mode="after")
    def _pgvector_needs_a_postgres_url(self) -> StoreSettings:
        if self.backend == "pgvector" and not (self.url or "").startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "store.backend=pgvector needs store.url=postgresql://user@host:5432/dbname "
                "(the password in KUBEVEC_STORE__PASSWORD, not in the url)"
            )
        return self
