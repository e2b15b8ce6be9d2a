"""Amazon Bedrock: Titan Text Embeddings v2 and Cohere embed models, with the AWS credential chain.

Credentials come from boto3's default chain, so nothing is configured in a pod with IRSA (a
projected web-identity token) or EKS Pod Identity, and environment keys work elsewhere. boto3 is an
optional extra (``pip install 'kubevec[bedrock]'``; the image carries it) so the base install
stays small. botocore's own retries are off: the shared policy (remote.py) retries throttling, 5xx
and timeouts with backoff, as for every other provider, and counts them.

Titan takes one text per call (run a few at a time); Cohere on Bedrock takes up to 96 with
``input_type`` for each side of a search.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable
from typing import Any, Final

from kubevec.core.errors import EmbedderError, Retryable
from kubevec.inference.providers.embedders.remote import (
    DEFAULT_OPTIONS,
    Kind,
    RemoteEmbedder,
    RemoteOptions,
    RetryPolicy,
    public_url,
    retry_after,
)

DEFAULT_MODEL: Final = "amazon.titan-embed-text-v2:0"
KNOWN_DIMENSIONS: Final = {
    "amazon.titan-embed-text-v2:0": 1024,
    "amazon.titan-embed-text-v1": 1536,
    "cohere.embed-english-v3": 1024,
    "cohere.embed-multilingual-v3": 1024,
    "cohere.embed-v4:0": 1536,
}
#: Titan calls in flight at once (one text each).
TITAN_CONCURRENCY: Final = 8
RETRYABLE_CODES: Final = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelTimeoutException",
    }
)
AUTH_CODES: Final = frozenset(
    {"AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException"}
)


def _is_cohere(model: str) -> bool:
    """Cohere's models, also through a cross-region inference profile (``us.cohere.embed-v4:0``)."""
    return "cohere.embed" in model


class BedrockEmbedder(RemoteEmbedder):
    provider = "bedrock"
    known_dimensions = KNOWN_DIMENSIONS
    max_texts = 96
    default_batch_size = 96
    default_max_input_tokens = 8000

    def __init__(
        self, options: RemoteOptions = DEFAULT_OPTIONS, *, region: str | None = None, client: Any = None
    ) -> None:
        model = options.model or DEFAULT_MODEL
        base_url = options.base_url
        if client is None:
            client = _client(region=region, endpoint=base_url, timeout=options.timeout)
        self._client = client
        self._endpoint = public_url(str(getattr(getattr(client, "meta", None), "endpoint_url", base_url or "")))
        self._cohere = _is_cohere(model)
        titan = dataclasses.replace(options, batch_size=1_000_000)  # Titan: one text per call, many calls
        cohere = dataclasses.replace(options, max_input_tokens=min(options.max_input_tokens or 512, 512))
        super().__init__(
            calls=RetryPolicy(provider=self.provider, what=f"model={model}", max_attempts=options.max_attempts),
            model=model,
            options=cohere if self._cohere else titan,
        )
        self._titan_slots = asyncio.Semaphore(TITAN_CONCURRENCY)

    async def call_batch(self, texts: list[str], *, kind: Kind) -> list[list[float]]:
        if self._cohere:
            body: dict[str, Any] = {
                "texts": texts,
                "input_type": "search_document" if kind == "document" else "search_query",
                "truncate": "END",
            }
            if self.sent_dimension is not None:
                body["output_dimension"] = self.sent_dimension
            answer = await self._invoke(body)
            embeddings = answer.get("embeddings")
            rows = embeddings.get("float") if isinstance(embeddings, dict) else embeddings
            if not isinstance(rows, list):
                raise self.malformed("embeddings")
            return [list(row) for row in rows]
        return list(await asyncio.gather(*(self._titan(text) for text in texts)))

    async def _titan(self, text: str) -> list[float]:
        body: dict[str, Any] = {"inputText": text, "normalize": True}
        if self.sent_dimension is not None:
            body["dimensions"] = self.sent_dimension
        async with self._titan_slots:
            answer = await self._invoke(body)
        vector = answer.get("embedding")
        if not isinstance(vector, list):
            raise self.malformed("embedding")
        return vector

    async def _invoke(self, body: dict[str, Any]) -> dict[str, Any]:
        payload = json.dumps(body)

        def invoke() -> dict[str, Any]:
            return _classified(
                lambda: self._client.invoke_model(
                    modelId=self.model, body=payload, contentType="application/json", accept="application/json"
                ),
                model=self.model,
                endpoint=self._endpoint,
            )

        async def attempt() -> dict[str, Any]:
            return await asyncio.to_thread(invoke)

        assert self.calls is not None
        return await self.calls.call(attempt, url=f"{self._endpoint}/model/{self.model}/invoke")


def _client(*, region: str | None, endpoint: str | None, timeout: float) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise EmbedderError(
            "The bedrock embedder needs boto3: pip install 'kubevec[bedrock]' (the image has it)", reason="config"
        ) from None
    for chatty in ("botocore", "boto3", "urllib3"):  # their DEBUG lines carry signed headers
        logger = logging.getLogger(chatty)
        logger.setLevel(max(logger.level, logging.WARNING))
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=timeout)
    try:
        # A session of its own: boto3's default one caches the credentials it found first.
        session = boto3.session.Session(region_name=region)
        return session.client("bedrock-runtime", endpoint_url=endpoint, config=config)
    except Exception as exc:  # botocore.exceptions.NoRegionError and friends
        raise EmbedderError(
            f"Cannot make a Bedrock client: {exc}; set KUBEVEC_EMBEDDER__REGION (or AWS_DEFAULT_REGION)",
            reason="config",
        ) from None


def _classified(call: Callable[[], Any], *, model: str, endpoint: str) -> dict[str, Any]:
    """One invoke_model; botocore's exceptions sorted into retry later / clear error (never the credentials)."""
    from botocore import exceptions as aws

    where = f"POST {endpoint}/model/{model}/invoke"
    try:
        response = call()
        answer = json.loads(response["body"].read())
    except aws.ClientError as exc:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        if code in RETRYABLE_CODES or status == 429 or status >= 500:
            raise Retryable(
                f"status={status} code={code}",
                reason="rate_limited" if status == 429 or "Throttl" in code else "unavailable",
                retry_after=retry_after(exc.response.get("ResponseMetadata", {}).get("HTTPHeaders") or {}),
            ) from None
        if code in AUTH_CODES or status in (401, 403):
            raise EmbedderError(
                f"bedrock rejected the credentials ({where}, status={status}, code={code}): check the pod's "
                "IAM role (IRSA or Pod Identity) allows bedrock:InvokeModel on this model",
                reason="auth",
            ) from None
        raise EmbedderError(
            f"bedrock refused the request ({where}, status={status}, code={code}): {error.get('Message', '')}"[:400],
            reason="refused",
        ) from None
    except aws.NoCredentialsError:
        raise EmbedderError(
            "bedrock: no AWS credentials found (IRSA, Pod Identity, or AWS_ACCESS_KEY_ID in the environment)",
            reason="auth",
        ) from None
    except (aws.ConnectTimeoutError, aws.ReadTimeoutError) as exc:
        raise Retryable(f"timed out: {type(exc).__name__}", reason="timeout", retry_after=None) from None
    except (aws.EndpointConnectionError, aws.ConnectionClosedError) as exc:
        raise Retryable(f"{type(exc).__name__}", reason="unavailable", retry_after=None) from None
    except ValueError:
        raise EmbedderError(f"bedrock answered with a body that is not JSON ({where})", reason="response") from None
    if not isinstance(answer, dict):
        raise EmbedderError(f"bedrock answered with a body that is not an object ({where})", reason="response")
    return answer
