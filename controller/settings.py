"""The one settings object: environment variables with the ``KUBEVEC_`` prefix, nested with ``__``.

Loaded once at start-up (``Settings()``) and passed down; nothing else reads the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kubevec.backends.config import StoreSettings
from kubevec.backends.generations import POINTER_COLLECTION
from kubevec.inference.change_records import CHANGES
from kubevec.inference.documents import COLLECTIONS
from kubevec.inference.providers.config import DescriberSettings, EmbedderSettings
from kubevec.inference.providers.rerank import RerankerSettings
from kubevec.query.limits import Limits
from kubevec.query.oauth_metadata import ResourceMetadata


class HistorySettings(BaseModel):
    """``KUBEVEC_HISTORY__*``: the change history (the ``changes`` collection, ``kubevec changes``, ``list_changes``)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="record one summary per observed change of an indexed object")
    embed: bool = Field(
        default=True,
        description="embed each summary (one batched call per flush) so changes are found by meaning; "
        "false: nothing is embedded, changes are found by time, filters and words",
    )
    max_age_hours: float = Field(default=168.0, gt=0, description="records older than this are removed")
    max_records: int = Field(default=100_000, ge=100, description="per cluster; the oldest beyond it are removed")


class SyncSettings(BaseModel):
    """``KUBEVEC_SYNC__*``: how events become store writes."""

    model_config = ConfigDict(extra="forbid")

    debounce_seconds: float = Field(default=1.0, gt=0, description="flush the queue at least this often")
    batch_size: int = Field(default=64, ge=1, le=5000, description="flush early when this many documents wait")
    resync_interval_seconds: float = Field(default=600.0, ge=5, description="full diff of cluster vs store")
    max_backoff_seconds: float = Field(default=60.0, gt=0, description="cap of the retry backoff")
    builtin_capabilities: bool = Field(default=True, description="describe built-in kinds from /openapi/v3")
    api_groups: list[str] | None = Field(
        default=None,
        description="named API groups whose objects are indexed (the core group always is); default: all. "
        "Set it to what RBAC grants when access is not cluster-wide (chart: rbac.readSecrets=false)",
    )
    cluster_probe_seconds: float = Field(
        default=5.0, ge=0.5, description="how often /version is read; readiness drops while it fails"
    )
    unwritable_restart_seconds: float = Field(
        default=60.0,
        ge=1,
        description="an embedded store whose directory was deleted or replaced fails /healthz after this long "
        "(only a restart recreates it); /readyz fails at once",
    )
    migrate: bool = Field(
        default=False,
        description="when the store was built with another embedder, migrate it at start-up (as `kubevec "
        "migrate` does) instead of refusing to start",
    )


class ServerSettings(BaseModel):
    """``KUBEVEC_SERVER__*``: metrics and health endpoints."""

    model_config = ConfigDict(extra="forbid")

    host: str = "0.0.0.0"
    metrics_port: int = Field(default=9090, ge=0, le=65535, description="/metrics; 0 disables")
    health_port: int = Field(default=8080, ge=0, le=65535, description="/healthz and /readyz; 0 disables")


class TracingSettings(BaseModel):
    """``KUBEVEC_TRACING__*``: OpenTelemetry spans over OTLP/gRPC, off by default."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str | None = Field(default=None, description="OTLP gRPC collector, e.g. http://otel-collector:4317")
    service_name: str = Field(default="kubevec", min_length=1, description="service.name of every span")
    sample_ratio: float = Field(default=1.0, ge=0, le=1, description="share of traces kept")


class Settings(BaseSettings):
    """Everything kubevec can be told. See the configuration reference in README.md."""

    model_config = SettingsConfigDict(
        env_prefix="KUBEVEC_", env_nested_delimiter="__", extra="ignore", populate_by_name=True
    )

    kubeconfig: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("KUBEVEC_KUBECONFIG", "KUBECONFIG"),
        description="kubeconfig path (default: in-cluster service account, else ~/.kube/config)",
    )
    kube_context: str | None = Field(default=None, description="kubeconfig context (default: its current-context)")
    cluster_name: str = Field(
        default="default",
        min_length=1,
        max_length=63,
        pattern=r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$",
        description="recorded in every id and payload: letters, digits, '.', '_' and '-' (ids are '/'-separated)",
    )
    namespace: str | None = Field(default=None, description="watch one namespace only (default: all)")
    peering: str | None = Field(default=None, description="kopf peering name for one-active HA (default: off)")
    peering_priority: int | None = Field(default=None, description="this replica's peering priority (default: random)")
    peering_lifetime_seconds: int = Field(default=60, ge=5, description="how long a silent peer counts as alive")
    log_level: str = Field(default="INFO")
    log_format: Literal["text", "json"] = Field(
        default="text", description="text lines, or one JSON object per line (time, level, logger, message)"
    )
    mcp_token: SecretStr | None = Field(
        default=None, description="bearer token required by the MCP server over HTTP (`kubevec mcp`, `kubevec run`)"
    )
    mcp_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="`kubevec run` also serves the MCP tools over HTTP on this port (server.host); 0: off",
    )
    mcp_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host headers `kubevec mcp --transport http` accepts besides loopback (JSON list; '*': any)",
    )
    mcp_allowed_origins: list[str] = Field(default_factory=list, description="Origin headers it accepts")
    mcp_kubernetes_auth: bool = Field(
        default=False,
        description="accept Kubernetes bearer tokens over MCP HTTP (TokenReview); each caller sees what its RBAC "
        "lets it list (SubjectAccessReview)",
    )
    mcp_audiences: list[str] = Field(
        default_factory=list,
        description='audiences a Kubernetes token must carry (e.g. ["kubevec"]); default: the API server\'s own',
    )
    mcp_oidc_issuer: str | None = Field(
        default=None,
        description="the OIDC issuer the API server trusts: served as the authorization server in "
        "/.well-known/oauth-protected-resource (RFC 9728) and named in every 401, for MCP clients that sign users in",
    )
    mcp_resource_url: str | None = Field(
        default=None, description="the MCP endpoint's public URL (https://host/mcp); default: as each request came"
    )
    mcp_authentication_config: Path | None = Field(
        default=None,
        description="an AuthenticationConfiguration file (the API server's format, jwt issuers with claim mappings): "
        "tokens of these issuers are checked here and their users decided by the cluster's RBAC",
    )
    mcp_audit_queries: bool = Field(
        default=False,
        description="put the question's own words (query, keyword) in each tool call's audit record (off: "
        "they say what a team is working on)",
    )
    mcp_tokens_file: Path | None = Field(
        default=None, description="static MCP tokens with scopes (namespaces, collections, clusters), YAML or JSON"
    )
    mcp_authorization: Literal["rbac", "reviews"] = Field(
        default="rbac",
        description="how a Kubernetes caller's namespaces are judged: 'rbac' reads the RBAC objects once per TTL "
        "for all callers and matches rules here (2 SubjectAccessReviews per caller); 'reviews' asks "
        "SubjectAccessReview per (namespace, resource), for clusters that grant outside RBAC (webhook, ABAC)",
    )
    mcp_reviews_per_second: float = Field(
        default=100.0, gt=0, le=10_000, description="TokenReviews and SubjectAccessReviews per second, all callers"
    )
    mcp_reviews_burst: int = Field(default=200, ge=1, le=100_000, description="reviews asked at once before the rate")
    mcp_review_max_wait_seconds: float = Field(
        default=5.0,
        ge=0,
        le=300,
        description="a caller whose reviews would wait longer for the budget gets 503 with Retry-After",
    )
    mcp_caller_sessions: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="open MCP HTTP sessions per caller (identity or static token), below mcp_max_sessions; "
        "default: 50, or half of mcp_max_sessions when that is lower",
    )
    mcp_caller_in_flight: int = Field(default=16, ge=1, le=10_000, description="requests in progress per caller")
    mcp_max_in_flight: int = Field(default=256, ge=1, le=100_000, description="requests in progress, all callers")
    mcp_caller_requests_per_second: float = Field(
        default=20.0, gt=0, le=100_000, description="requests per second per caller (bursts of twice that)"
    )
    mcp_max_requests_per_second: float = Field(
        default=1000.0, gt=0, le=1_000_000, description="requests per second, all callers (bursts of twice that)"
    )
    mcp_access_ttl_seconds: float = Field(
        default=30.0, gt=0, le=3600, description="how long a caller's identity and access decisions are re-used"
    )
    mcp_session_idle_seconds: float = Field(
        default=300.0, gt=0, le=86400, description="an MCP HTTP session ends after this long without a request"
    )
    mcp_max_sessions: int = Field(default=1000, ge=1, le=100_000, description="open MCP HTTP sessions at most")
    store: StoreSettings = Field(default_factory=StoreSettings)
    cache_dir: Path = Field(
        default_factory=lambda: Path.home() / ".cache" / "kubevec",
        description="where one-shot commands keep what they can re-use between calls (the keyword index)",
    )
    cli_resident_seconds: int = Field(
        default=300,
        ge=0,
        le=86400,
        description="reading commands leave a warm process answering the next ones with the same settings; "
        "it exits after this long without a call (0: off; read before the settings, see controller/cli/resident.py)",
    )
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    reranker: RerankerSettings = Field(default_factory=RerankerSettings)
    describer: DescriberSettings = Field(default_factory=DescriberSettings)
    sync: SyncSettings = Field(default_factory=SyncSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    @model_validator(mode="after")
    def _one_caller_cannot_fill_the_server(self) -> Settings:
        if self.mcp_caller_sessions is not None and self.mcp_caller_sessions >= self.mcp_max_sessions:
            raise ValueError(
                f"mcp_caller_sessions ({self.mcp_caller_sessions}) must be below mcp_max_sessions "
                f"({self.mcp_max_sessions}), or one caller could lock every other out"
            )
        if self.mcp_caller_in_flight > self.mcp_max_in_flight:
            raise ValueError("mcp_caller_in_flight must not exceed mcp_max_in_flight")
        return self

    def mcp_discovery(self) -> ResourceMetadata | None:
        """RFC 9728 metadata for the MCP endpoint, when an OIDC issuer is configured (the API server's, or
        the outside issuers of ``mcp_authentication_config``: every one is named an authorization server)."""
        from kubevec.query.oidc import read_issuers  # PyJWT and its cryptography: only for a server that names them

        path = self.mcp_authentication_config
        outside = [issuer.url for issuer in read_issuers(path)] if path else []
        issuers = [self.mcp_oidc_issuer] if self.mcp_oidc_issuer else []
        issuers += outside
        if not issuers:
            return None
        return ResourceMetadata(
            issuer=issuers[0],
            more_issuers=tuple(issuers[1:]),
            resource=self.mcp_resource_url,
            name=f"kubevec ({self.cluster_name})",
        )

    def mcp_limits(self) -> Limits:
        """The MCP endpoint's caps, global and per caller."""
        caller_sessions = self.mcp_caller_sessions or max(1, min(50, self.mcp_max_sessions // 2))
        return Limits(
            sessions=max(self.mcp_max_sessions, caller_sessions + 1),
            caller_sessions=caller_sessions,
            in_flight=self.mcp_max_in_flight,
            caller_in_flight=self.mcp_caller_in_flight,
            caller_rate=self.mcp_caller_requests_per_second,
            caller_burst=2 * self.mcp_caller_requests_per_second,
            rate=self.mcp_max_requests_per_second,
            session_idle_seconds=self.mcp_session_idle_seconds,
        )

    def collection(self, name: str) -> str:
        return f"{self.store.collection_prefix}{name}"

    def bases(self) -> dict[str, str]:
        """Generation 0's name of each logical collection (``instances`` -> ``kv_instances`` with a prefix)."""
        return {c: self.collection(c) for c in (*COLLECTIONS, CHANGES)}

    @property
    def pointer(self) -> str:
        """The collection holding which generation is active (see ``backends/generations.py``)."""
        return self.collection(POINTER_COLLECTION)
