"""What every model server reached over HTTP shares: retries, errors, batches, clipping, checks.

Each provider (OpenAI-compatible, Cohere, Gemini, Bedrock) only says how one batch is asked for
and read back; everything a team would otherwise find out in production is here, once:

- retries with capped exponential backoff for what can succeed later (429, 5xx, timeouts, refused
  connections), honouring ``Retry-After``; tenacity does the looping;
- one clear error for what cannot (a wrong key, a refused request) naming the provider, the URL
  and the status, never the key or a header's value (they are scrubbed from anything echoed);
- batches bounded by count and by an estimate of tokens; a server that answers 413 (or says the
  batch is too large) gets halves, and the smaller size is kept for the next batches;
- texts longer than the model takes are clipped with a counted warning, never dropped;
- every vector checked against the dimension the store was built for and L2-normalised.
"""

from __future__ import annotations

import base64
import dataclasses
import email.utils
import hashlib
import logging
import math
import re
import struct
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal, TypeVar

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from kubevec.core.clock import SYSTEM_CLOCK, Clock
from kubevec.core.errors import BatchTooLarge, EmbedderError, EmbedderUnavailable, Retryable

logger = logging.getLogger(__name__)
T = TypeVar("T")
Kind = Literal["document", "query"]

#: Characters per token assumed when clipping and batching: low on purpose (English runs at ~4,
#: YAML and identifiers nearer 3), so a clipped text fits and a batch stays inside the server's limit.
CHARS_PER_TOKEN: Final = 3
#: Statuses that can succeed later. 408: the server timed out reading; 529: Anthropic-style overload.
RETRYABLE_STATUS: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
#: What a server says when a batch is too large for it (TEI, vLLM, LiteLLM wordings).
TOO_LARGE_WORDS: Final = ("batch size", "too many inputs", "max_client_batch_size", "maximum allowed batch")


def public_url(url: str) -> str:
    """``url`` without credentials or query string: what errors and logs may show of an endpoint."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


class Scrubber:
    """Removes secrets (keys, header values) from text a server echoed back before it is shown.

    Servers echo what they were sent in their own encodings: JSON escapes (``\\u002d`` for ``-``,
    ``\\/``) and URL encoding (``%2D``). The text is decoded first, then scrubbed, and only then may a
    caller cut it: cut first, a key straddling the cut survived less its last character.
    """

    def __init__(self, secrets: Sequence[str]) -> None:
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str, *, limit: int | None = None) -> str:
        text = _decoded(text)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text if limit is None or len(text) <= limit else text[:limit] + "..."


_JSON_ESCAPE: Final = re.compile(r"\\u([0-9a-fA-F]{4})|\\([/\\\"])")


def _decoded(text: str) -> str:
    """``text`` with JSON escapes and percent-encoding undone (what a server echo may hide a key behind)."""
    if "\\" in text:
        text = _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else m.group(2), text)
    if "%" in text:
        text = urllib.parse.unquote(text)
    return text


def retry_after(headers: Mapping[str, str]) -> float | None:
    """``Retry-After`` as seconds (a number or an HTTP date), or None: the one reading of it for every
    provider (httpx's headers, botocore's, the Voyage client's), whatever the case of the header's name."""
    value = headers.get("retry-after")
    if value is None:
        value = next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == "retry-after"), None)
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class RetryPolicy:
    """The retry policy every call to one provider shares; ``fn`` raises :class:`Retryable` for what may pass."""

    def __init__(
        self,
        *,
        provider: str,
        what: str = "",
        max_attempts: int = 6,
        max_backoff: float = 30.0,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.provider = provider
        self.what = what
        self.max_attempts = max(1, max_attempts)
        #: Calls retried so far (the controller exports it as kubevec_embedding_retries_total).
        self.retries = 0
        self._max_backoff = max_backoff
        self._backoff = wait_exponential_jitter(multiplier=0.5, max=max_backoff)
        #: Where the waits between attempts are slept (tests pass a clock that does not wait).
        self.clock = clock

    async def call(self, fn: Callable[[], Awaitable[T]], *, url: str) -> T:
        """``fn()`` with retries for what can succeed later; one clear error for the rest."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(lambda exc: isinstance(exc, Retryable)),
            before_sleep=self._count_retry,
            sleep=self.clock.sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await fn()
        except Retryable as exc:
            raise EmbedderUnavailable(
                f"{self.provider} did not answer after {self.max_attempts} attempts "
                f"(POST {public_url(url)}{self._context()}): {exc}",
                reason=exc.reason,
                status=exc.status,
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _context(self) -> str:
        return f"; {self.what}" if self.what else ""

    def _count_retry(self, state: RetryCallState) -> None:
        self.retries += 1

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, Retryable) and exc.retry_after is not None:
            delay = min(exc.retry_after, self._max_backoff)
        else:
            delay = self._backoff(state)
        logger.warning(
            "Retrying %s request attempt=%d delay=%.2fs error=%s", self.provider, state.attempt_number, delay, exc
        )
        return delay


class HttpCalls(RetryPolicy):
    """One httpx client per server, and its retry policy."""

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        headers: Mapping[str, str],
        secrets: Sequence[str] = (),
        what: str = "",
        max_attempts: int = 6,
        max_backoff: float = 30.0,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        super().__init__(provider=provider, what=what, max_attempts=max_attempts, max_backoff=max_backoff, clock=clock)
        self.base_url = base_url.rstrip("/")
        userinfo = urllib.parse.urlsplit(base_url)
        self._scrub = Scrubber([*secrets, *headers.values(), userinfo.password or "", userinfo.username or ""])
        self._headers = dict(headers)
        self._timeout = timeout
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    @classmethod
    def of(
        cls, options: RemoteOptions, *, provider: str, base_url: str, headers: Mapping[str, str], secret: str, what: str
    ) -> HttpCalls:
        """The calls of an embedder configured by ``options`` (attempts, timeout, transport), at ``base_url``."""
        return cls(
            provider=provider,
            base_url=base_url,
            headers=headers,
            secrets=[secret],
            what=what,
            max_attempts=options.max_attempts,
            timeout=options.timeout,
            transport=options.transport,
        )

    def client(self) -> httpx.AsyncClient:
        """Made at the first call: an httpx client belongs to the event loop it was first used on."""
        if self._client is None:
            self._client = httpx.AsyncClient(
                headers=self._headers, timeout=self._timeout, transport=self._transport, follow_redirects=False
            )
        return self._client

    async def post(self, path: str, body: Any, *, params: Mapping[str, str] | None = None) -> Any:
        """POST ``body`` as JSON to ``base_url + path``; the decoded JSON answer, retried as above."""
        url = self.base_url + path
        return await self.call(lambda: self._post_once(url, body, params), url=url)

    async def _post_once(self, url: str, body: Any, params: Mapping[str, str] | None) -> Any:
        try:
            response = await self.client().post(url, json=body, params=params)
        except httpx.TimeoutException as exc:
            raise Retryable(f"timed out: {type(exc).__name__}", reason="timeout", retry_after=None) from None
        except httpx.TransportError as exc:
            raise Retryable(
                self._scrub(f"{type(exc).__name__}: {exc}"), reason="unavailable", retry_after=None
            ) from None
        status = response.status_code
        if status < 300:
            try:
                return response.json()
            except ValueError:
                raise EmbedderError(
                    f"{self.provider} answered {status} with a body that is not JSON (POST {public_url(url)})",
                    reason="response",
                ) from None
        where = f"POST {public_url(url)}, status={status}{self._context()}"
        if status in RETRYABLE_STATUS:
            reason = "rate_limited" if status == 429 else "unavailable"
            raise Retryable(f"status={status}", reason=reason, retry_after=retry_after(response.headers), status=status)
        detail = self._scrub(response.text.strip(), limit=300)
        if status in (401, 403) or (status == 400 and "api key" in detail.lower()):  # Google answers 400
            # the body may echo part of the key: not shown
            raise EmbedderError(
                f"{self.provider} rejected the credentials ({where}): check the API key or the pod's identity",
                reason="auth",
                status=status,
            )
        if status == 413 or any(word in detail.lower() for word in TOO_LARGE_WORDS):
            raise BatchTooLarge(f"{self.provider} refused a batch as too large ({where}): {detail}", status=status)
        raise EmbedderError(f"{self.provider} refused the request ({where}): {detail}", reason="refused", status=status)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def normalised(row: Sequence[float]) -> list[float]:
    """``row`` scaled to unit length (a server may return unnormalised vectors, e.g. at a reduced dimension)."""
    norm = math.sqrt(sum(x * x for x in row))
    return [float(x) / norm for x in row] if norm > 0 else [float(x) for x in row]


def floats_from_base64(value: str) -> list[float]:
    """OpenAI's ``encoding_format=base64``: little-endian float32s."""
    raw = base64.b64decode(value)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def prefixes_tag(query_prefix: str, document_prefix: str) -> str:
    """A model name's suffix when prefixes are set: other prefixes give other vectors for the same text."""
    if not query_prefix and not document_prefix:
        return ""
    return "+p" + hashlib.sha256(f"{query_prefix}\0{document_prefix}".encode()).hexdigest()[:8]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RemoteOptions:
    """How any embedder behind a server is reached, batched and clipped: read once from the settings
    (``kubevec.inference.providers.config.remote_options``) and handed down whole, so the layers between
    (provider, HTTP calls, batching) do not each spell out the same ten parameters.

    ``None`` for ``model``, ``batch_size`` or ``max_input_tokens``: the provider's own default.
    """

    model: str | None = None
    base_url: str | None = None
    dimension: int | None = None
    batch_size: int | None = None
    max_input_tokens: int | None = None
    query_prefix: str = ""
    document_prefix: str = ""
    max_attempts: int = 6
    timeout: float = 60.0
    #: Tests answer requests in process; None: the network.
    transport: httpx.AsyncBaseTransport | None = None


#: Every provider's own defaults.
DEFAULT_OPTIONS: Final = RemoteOptions()


class RemoteEmbedder:
    """An embedder behind a server: the provider's subclass says how one batch is asked for and read.

    ``dimension`` is what the store's collections are built with: ``KUBEVEC_EMBEDDER__DIMENSION``,
    or the provider's known size for its model (``known_dimensions``); sent to the server only to
    reduce a known model's vectors (``sent_dimension``).
    """

    provider: ClassVar[str]
    #: Vector sizes of the models the provider table knows (others need ``KUBEVEC_EMBEDDER__DIMENSION``).
    known_dimensions: ClassVar[Mapping[str, int]] = {}
    #: The API's own cap on texts per request.
    max_texts: ClassVar[int] = 2048
    #: What one request may carry, in tokens (estimated), when the API caps it.
    max_request_tokens: ClassVar[int] = 250_000
    #: Texts per request and tokens per text when the options do not say.
    default_batch_size: ClassVar[int] = 128
    default_max_input_tokens: ClassVar[int] = 8191

    def __init__(self, *, calls: RetryPolicy | None, model: str, options: RemoteOptions) -> None:
        self.calls = calls
        self.model = model
        dimension = options.dimension
        self._dimension = known_dimension(self.provider, model, self.known_dimensions, dimension)
        #: The size to ask the server for (a known model's reduction), or None: the model's own.
        self.sent_dimension = sent_dimension(model, self.known_dimensions, dimension)
        self._cap = max(1, min(options.batch_size or self.default_batch_size, self.max_texts))
        self.max_input_tokens = options.max_input_tokens or self.default_max_input_tokens
        self.query_prefix = options.query_prefix
        self.document_prefix = options.document_prefix
        #: Texts clipped to the model's input limit so far (exported as kubevec_embedder_truncated_total).
        self.truncated = 0

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}{prefixes_tag(self.query_prefix, self.document_prefix)}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def retries(self) -> int:
        return self.calls.retries if self.calls is not None else 0

    @property
    def batch_size(self) -> int:
        """Texts per request now: the configured size, or less after the server refused a batch as too large."""
        return self._cap

    async def call_batch(self, texts: list[str], *, kind: Kind) -> list[list[float]]:
        """The provider's request for one batch; rows in the order of ``texts``."""
        raise NotImplementedError

    def malformed(self, expected: str, exc: Exception | None = None) -> EmbedderError:
        """The error for an answer without the fields the API promises."""
        cause = f": {type(exc).__name__}" if exc is not None else ""
        return EmbedderError(
            f"{self.provider} answered without {expected} (model={self.model}){cause}", reason="response"
        )

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        clipped = self._clipped([self.document_prefix + text for text in texts])
        vectors: list[list[float]] = []
        for batch in self._batches(clipped):
            vectors.extend(await self._embed(batch, kind="document"))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        (vector,) = await self._embed(self._clipped([self.query_prefix + text]), kind="query")
        return vector

    def _clipped(self, texts: list[str]) -> list[str]:
        limit = self.max_input_tokens * CHARS_PER_TOKEN
        long = [i for i, text in enumerate(texts) if len(text) > limit]
        if long:
            self.truncated += len(long)
            logger.warning(
                "Clipped texts to the model's input limit provider=%s model=%s count=%d limit=%d",
                self.provider,
                self.model,
                len(long),
                self.max_input_tokens,
            )
            for i in long:
                texts[i] = texts[i][:limit]
        return texts

    def _batches(self, texts: list[str]) -> Iterator[list[str]]:
        batch: list[str] = []
        tokens = 0
        for text in texts:
            cost = len(text) // CHARS_PER_TOKEN + 1
            if batch and (len(batch) >= self._cap or tokens + cost > self.max_request_tokens):
                yield batch
                batch, tokens = [], 0
            batch.append(text)
            tokens += cost
        if batch:
            yield batch

    async def _embed(self, batch: list[str], *, kind: Kind) -> list[list[float]]:
        try:
            rows = await self.call_batch(batch, kind=kind)
        except BatchTooLarge:
            if len(batch) == 1:
                raise
            half = len(batch) // 2
            if half < self._cap:
                logger.warning(
                    "Sending smaller batches: the server refused %d texts at once provider=%s batch_size=%d",
                    len(batch),
                    self.provider,
                    half,
                )
                self._cap = half
            return [*await self._embed(batch[:half], kind=kind), *await self._embed(batch[half:], kind=kind)]
        if len(rows) != len(batch):
            raise EmbedderError(
                f"{self.provider} returned {len(rows)} vectors for {len(batch)} texts (model={self.model})",
                reason="response",
            )
        for row in rows:
            if len(row) != self._dimension:
                raise EmbedderError(
                    f"{self.provider} returned {len(row)}-dimensional vectors for model={self.model}, expected "
                    f"{self._dimension} (KUBEVEC_EMBEDDER__DIMENSION); to move the store to another model or "
                    "size, run kubevec migrate",
                    reason="dimension",
                )
        return [normalised(row) for row in rows]

    async def aclose(self) -> None:
        if isinstance(self.calls, HttpCalls):
            await self.calls.aclose()


def sent_dimension(model: str, table: Mapping[str, int], given: int | None) -> int | None:
    """The size to ask the server for: only a known model's reduction (other servers refuse the field)."""
    return given if given is not None and model in table and table[model] != given else None


def known_dimension(provider: str, model: str, table: Mapping[str, int], given: int | None) -> int:
    """``given``, or the model's known size; a clear error naming the setting otherwise."""
    if given is not None:
        return given
    if model in table:
        return table[model]
    raise EmbedderError(
        f"Unknown output dimension for {provider} model {model!r}: set KUBEVEC_EMBEDDER__DIMENSION "
        "to the size of its vectors",
        reason="config",
    )


def require(value: str | None, *, what: str, setting: str, provider: str) -> str:
    if not value:
        raise EmbedderError(f"The {provider} embedder needs {what}: set {setting}", reason="config")
    return value
