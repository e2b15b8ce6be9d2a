"""Store settings: a plain pydantic model, nested into the controller's one settings object."""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class StoreSettings(BaseModel):
    """``KUBEVEC_STORE__*``: which vector database, where, and how collections are named."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["chroma", "qdrant", "pgvector", "lancedb", "weaviate", "redis", "memory"] = Field(
        default="chroma",
        description="chroma (default, embedded), qdrant, pgvector (PostgreSQL), lancedb (embedded, on disk), "
        "weaviate, redis (Redis 8 vector sets), or memory (tests only)",
    )
    path: Path | None = Field(
        default=Path(".kubevec/chroma"),
        description="embedded Chroma, Qdrant local-mode or LanceDB directory; ignored when url is set",
    )
    url: str | None = Field(
        default=None,
        description="server URL, e.g. http://chroma:8000, http://qdrant:6333, http://weaviate:8080, "
        "postgresql://kubevec@db:5432/kubevec or redis://redis:6379/0 (rediss:// for TLS)",
    )
    api_key: SecretStr | None = Field(default=None, description="Qdrant or Weaviate API key (server mode)")
    grpc_port: int = Field(default=50051, ge=1, le=65535, description="Weaviate's gRPC port, on the url's host")
    consistency_level: Literal["ONE", "QUORUM", "ALL"] = Field(
        default="QUORUM", description="Weaviate: replicas that must answer each read and write"
    )
    replication_factor: int = Field(
        default=1, ge=1, le=15, description="Weaviate: copies of each collection kubevec creates (a multi-node cluster)"
    )
    password: SecretStr | None = Field(
        default=None, description="PostgreSQL (pgvector) or Redis password; keeps it out of the url, from a Secret"
    )
    key_prefix: str = Field(
        default="kubevec:",
        pattern=r"^[A-Za-z0-9:_.-]{0,64}$",
        description="Redis: prefix of every key kubevec writes (one Redis can hold several installs)",
    )
    tls_ca_file: Path | None = Field(
        default=None, description="Redis over TLS (rediss://): the CA bundle that signed the server's certificate"
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

    @property
    def sharing(self) -> Literal["shared", "one process", "own"]:
        """Which processes may open this store at once.

        ``shared``: a server, or embedded Chroma or LanceDB (readers beside a writer, by the write
        stamps); ``one process``: Qdrant's local mode locks its folder while a client is open (another
        process gets "already accessed by another instance"); ``own``: the memory store lives and dies
        with its process. Long-lived helpers that would hold a store open beside the commands (the
        CLI's resident reader) are only for ``shared`` stores.
        """
        if self.backend == "memory":
            return "own"
        if self.backend == "qdrant" and not self.url:
            return "one process"
        return "shared"

    @model_validator(mode="after")
    def _weaviate_needs_a_url(self) -> StoreSettings:
        if self.backend == "weaviate" and not (self.url or "").startswith(("http://", "https://")):
            raise ValueError("store.backend=weaviate needs store.url=http(s)://host:8080 (and store.grpc_port)")
        return self

    @model_validator(mode="after")
    def _redis_needs_a_redis_url(self) -> StoreSettings:
        if self.backend != "redis":
            return self
        if not (self.url or "").startswith(("redis://", "rediss://")):
            raise ValueError("store.backend=redis needs store.url=redis://host:6379/0 (rediss:// for TLS)")
        if urllib.parse.urlsplit(self.url or "").password:
            raise ValueError("store.url must not hold the Redis password: set KUBEVEC_STORE__PASSWORD (from a Secret)")
        return self

    @model_validator(mode="after")
    def _pgvector_needs_a_postgres_url(self) -> StoreSettings:
        if self.backend == "pgvector" and not (self.url or "").startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "store.backend=pgvector needs store.url=postgresql://user@host:5432/dbname "
                "(the password in KUBEVEC_STORE__PASSWORD, not in the url)"
            )
        return self
