"""Every error kubevec raises on purpose, in one tree (as httpx keeps its own in one module).

Callers catch by what happened, never by which library was underneath: a store's, a model server's or
the API server's own exceptions are translated where they are called. Each edge (a CLI command, an MCP
tool) maps :class:`KubevecError` to one line its reader can act on; anything else is a bug and keeps
its traceback.

The hierarchy::

    KubevecError
    ├── ConfigError                 (ValueError) an operator's setting or file is unusable
    │   ├── AccessConfigError       the static token file
    │   ├── PolicyError             a SyncPolicy spec
    │   └── UnsafeBind              serving HTTP on a public address without authentication
    ├── InputError                  (ValueError) what a caller or the cluster sent cannot be used
    │   ├── SearchError             a search, lookup or listing argument
    │   ├── InvalidFilter           a portable filter
    │   ├── InvalidRecord           a record that breaks the store contract
    │   └── InferenceError          an object or CRD that cannot become a document
    │       └── TooComplex          past a hard bound (values, time)
    ├── BackendError                (RuntimeError) the store refused an operation
    │   ├── BackendUnavailable      cannot be reached, or failing for now
    │   ├── CollectionMismatch      built with another dimension, distance or embedder
    │   └── CollectionNotFound      nothing indexed yet, or a generation switched
    ├── ModelError                  (RuntimeError) a model (local or behind an API) failed
    │   ├── Retryable               one call may pass if asked again (never leaves the retry policy)
    │   ├── EmbedderError
    │   │   ├── EmbedderUnavailable transient: network, 5xx, rate limit, timeout
    │   │   └── BatchTooLarge       the server refused the batch for its size
    │   ├── RerankError
    │   └── LLMError
    ├── KubeError                   (RuntimeError) a Kubernetes API call failed, by status
    │   ├── KubeUnauthorized        401
    │   ├── KubeForbidden           403
    │   ├── KubeNotFound            404
    │   ├── KubeConflict            409
    │   └── KubeServerError         5xx
    ├── ReviewUnavailable           (RuntimeError) no TokenReview/SubjectAccessReview answer: refuse
    │   └── KeysUnavailable         an outside issuer's keys expired and cannot be fetched: 503
    ├── TokenRefused                an outside identity provider's token proves nothing (its reason)
    └── CommandError                (RuntimeError) a CLI command's failure, said on one line

The builtin second base of each branch is kept so code that caught ``ValueError`` or ``RuntimeError``
before the tree existed still does.
"""

from __future__ import annotations

from typing import ClassVar


class KubevecError(Exception):
    """The root: an error kubevec raised on purpose, whose message is meant for the reader."""

    def first_line(self) -> str:
        """The message's first line: what an edge shows (details below it stay in the log)."""
        return (str(self).splitlines() or [type(self).__name__])[0]


# -- configuration ------------------------------------------------------------------------------------


class ConfigError(KubevecError, ValueError):
    """An operator's setting or file is unusable; the message names it."""


class AccessConfigError(ConfigError):
    """The static token file is unusable; the message names the file and the entry."""


class PolicyError(ConfigError):
    """A SyncPolicy's spec cannot be used; the message names the field."""


class UnsafeBind(ConfigError):
    """Serving over HTTP on a non-loopback address without a token, and without saying so."""


# -- input ----------------------------------------------------------------------------------------------


class InputError(KubevecError, ValueError):
    """What a caller or the cluster sent cannot be used; the message says what to change."""


class SearchError(InputError):
    """Bad search input; the message says what to change."""


class InvalidFilter(InputError):
    """A filter is malformed: unknown operator, wrong type, too deep. The message says which."""


class InvalidRecord(InputError):
    """A record breaks the contract (wrong dimension, reserved or non-scalar metadata)."""


class InferenceError(InputError):
    """An object could not be turned into a document; the message names the object.

    ``reason`` is a short word for ``kubevec_documents_skipped_total{reason}``.
    """

    reason: str = "malformed"


class TooComplex(InferenceError):
    """An object past a hard bound; ``reason`` names which (``nodes`` or ``time``), for metrics."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


# -- the store ------------------------------------------------------------------------------------------


class BackendError(KubevecError, RuntimeError):
    """The store refused an operation (bad request, inconsistent collection, ...)."""


class BackendUnavailable(BackendError):
    """The store cannot be reached or is temporarily failing; retrying later may succeed."""


class CollectionMismatch(BackendError):
    """An existing collection was built with another dimension, distance or embedder."""


class CollectionNotFound(BackendError):
    """The collection does not exist (nothing indexed yet, or a generation switched since its name was read)."""


# -- models ---------------------------------------------------------------------------------------------


class ModelError(KubevecError, RuntimeError):
    """A model failed; the message says what to fix (a missing key, an unreachable API...).

    ``reason`` is a short word for metrics (``kubevec_embedder_errors_total{reason}``): ``auth``,
    ``refused``, ``dimension``, ``response``, ``config`` or ``error``; never anything the caller sent.
    """

    #: What :meth:`public` calls the failing part.
    role: ClassVar[str] = "model"

    def __init__(self, message: str, *, reason: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        #: The HTTP status a server answered with, when one did.
        self.status = status

    def public(self, *, provider: str) -> str:
        """What an unauthenticated reader may see (``/readyz``, the status record): the provider, the
        reason and the status, never a server's words (a body can echo the key)."""
        status = f" status={self.status}" if self.status is not None else ""
        return f"{self.role} failing provider={provider} reason={self.reason}{status}"


class Retryable(ModelError):
    """One call to a model server failed in a way that may pass if asked again (429, 5xx, a timeout).

    Raised inside a provider's retry policy (``kubevec.inference.providers.embedders.remote.RetryPolicy``),
    which asks again, honouring ``retry_after`` (seconds, from the server's ``Retry-After``), and turns
    the last one into :class:`EmbedderUnavailable`; it is in the tree so that one escaping a policy is
    still a :class:`ModelError`. ``reason`` as :class:`EmbedderUnavailable`'s.
    """

    def __init__(self, message: str, *, reason: str, retry_after: float | None, status: int | None = None) -> None:
        super().__init__(message, reason=reason, status=status)
        self.retry_after = retry_after


class EmbedderError(ModelError):
    """Embedding failed."""

    role: ClassVar[str] = "embedder"


class EmbedderUnavailable(EmbedderError):
    """A transient failure (network, 5xx, rate limit after retries): the caller may retry later.

    ``reason``: ``unavailable`` (5xx, connection), ``rate_limited`` (429) or ``timeout``.
    """

    def __init__(self, message: str, *, reason: str = "unavailable", status: int | None = None) -> None:
        super().__init__(message, reason=reason, status=status)


class BatchTooLarge(EmbedderError):
    """The server refused the batch for its size: send fewer texts at a time."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, reason="refused", status=status)


class RerankError(ModelError):
    """Reranking failed (the search answers in fused order then, and says so)."""

    role: ClassVar[str] = "reranker"


class LLMError(ModelError):
    """The LLM that refines capability descriptions failed or answered out of shape."""

    role: ClassVar[str] = "llm"


# -- Kubernetes -----------------------------------------------------------------------------------------


class KubeError(KubevecError, RuntimeError):
    """A Kubernetes API call failed; the message names the path and the status.

    The class says what happened (chosen by HTTP status in ``kubevec.controller.kube.errors.kube_error``,
    the one place that reads it), so callers catch :class:`KubeForbidden` or :class:`KubeNotFound`
    instead of reading ``reason`` strings, as kopf's ``clients/errors.py`` does.
    """

    def __init__(self, message: str, *, reason: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message
        self.status = status


class KubeUnauthorized(KubeError):
    """401: the credentials are not (or no longer) accepted."""


class KubeForbidden(KubeError):
    """403: RBAC does not allow it."""


class KubeNotFound(KubeError):
    """404: no such object, resource or path."""


class KubeConflict(KubeError):
    """409: exists already, or changed meanwhile."""


class KubeServerError(KubeError):
    """5xx: the API server (or an aggregated API behind it) is failing."""


class ReviewUnavailable(KubevecError, RuntimeError):
    """The API server could not answer a TokenReview or SubjectAccessReview: refuse, do not guess."""

    #: Seconds after which asking again may succeed (sent as Retry-After); None: unknown.
    retry_after: float | None = None


class KeysUnavailable(ReviewUnavailable):
    """An outside issuer's keys expired and could not be fetched again: the caller answers 503, not 401."""

    retry_after = 30.0


class TokenRefused(KubevecError):
    """A token of an outside issuer does not prove an identity; ``reason`` is one word (metric, log)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


# -- the command line -----------------------------------------------------------------------------------


class CommandError(KubevecError, RuntimeError):
    """A failure to report on one line, with a non-zero exit and no traceback."""
