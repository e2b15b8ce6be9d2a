"""Loopback stand-ins for the model servers, following each API's published request and response shapes.

Tests never reach the internet. One :class:`StandIn` speaks one dialect:

- ``openai``: ``POST /v1/embeddings`` (OpenAI, TEI, Ollama, vLLM, LiteLLM), ``Authorization: Bearer``;
  ``data[].index`` returned in reverse order (a client must sort), base64 when asked;
- ``azure``: ``POST /openai/deployments/{deployment}/embeddings?api-version=...``, ``api-key`` header;
- ``cohere``: ``POST /v2/embed`` with ``input_type`` search_document / search_query;
- ``gemini``: ``POST /v1beta/models/{model}:batchEmbedContents``, ``x-goog-api-key``, task types;
- ``bedrock``: ``POST /model/{modelId}/invoke`` signed with SigV4 (Titan: one ``inputText``; Cohere:
  ``texts`` + ``input_type``), errors as ``x-amzn-ErrorType``;
- ``voyage``: ``POST /v1/embeddings`` with ``input_type`` document / query, and ``POST /v1/rerank``;
- ``cohere-rerank`` (``POST /v2/rerank``, also what vLLM, Jina and Infinity serve) and ``tei-rerank``
  (``POST /rerank``);
- ``openai-chat``: ``POST /v1/chat/completions`` (the LLM describer's OpenAI-compatible endpoint): the
  answer is :attr:`StandIn.answer` as JSON content, followed by the ``name:`` line of the question.

Vectors are a hash of ``"{side}|{text}"`` (side: document, query, or "" for an API without input
types), so a test knows the exact vector each text must get and which side it was sent as.
``script`` holds faults for the next requests: an HTTP status with headers, or a delay in seconds.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import json
import struct
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from tests.controlplane.cluster import free_port

KEY = "sk-standin-7f3a9c2e41d8b6055e"
AWS_ACCESS_KEY = "AKIASTANDIN0000000001"
Fault = tuple[int, dict[str, str]] | float


def vector(text: str, size: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [((digest[i % len(digest)] / 255.0) - 0.5) for i in range(size)]


@dataclasses.dataclass
class Received:
    path: str
    texts: list[str]
    side: str  # "document", "query" or "" (the API has no input types)
    body: dict[str, Any]


@dataclasses.dataclass
class StandIn:
    dialect: str
    dimension: int = 16
    key: str = KEY
    #: Texts per request the server accepts (TEI's max_client_batch_size); more: 413 in TEI's words.
    max_batch: int | None = None
    #: Vectors of this size instead (a model that is not the one the store was built with).
    served_dimension: int | None = None
    script: list[Fault] = dataclasses.field(default_factory=list)
    received: list[Received] = dataclasses.field(default_factory=list)
    #: Requests that presented the right key, answered or refused by the script: what a client sent.
    calls: int = 0
    url: str = ""
    #: What ``openai-chat`` says a workload's software is (followed by its name).
    answer: str = "A stand-in answer"

    def expected(self, text: str, *, side: str) -> list[float]:
        """The unit vector a client must return for ``text`` sent as ``side``."""
        raw = vector(f"{side}|{text}", self.dimension)
        norm = sum(x * x for x in raw) ** 0.5
        return [x / norm for x in raw]

    @property
    def texts(self) -> list[str]:
        return [text for request in self.received for text in request.texts]

    # -- the shared part of every request -----------------------------------------------------------

    async def _fault(self) -> web.Response | None:
        self.calls += 1
        if not self.script:
            return None
        fault = self.script.pop(0)
        if isinstance(fault, float | int) and not isinstance(fault, tuple):
            await asyncio.sleep(float(fault))
            return None
        status, headers = fault
        if self.dialect == "bedrock":
            code = {429: "ThrottlingException", 503: "ServiceUnavailableException"}.get(
                status, "InternalServerException"
            )
            headers = {"x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/", **headers}
            return web.json_response({"message": f"scripted {status}"}, status=status, headers=headers)
        if self.dialect == "voyage":
            return web.json_response({"detail": f"scripted {status}"}, status=status, headers=headers)
        return web.json_response({"error": {"message": f"scripted {status}"}}, status=status, headers=headers)

    def _unauthorized(self, presented: str) -> web.Response:
        """A wrong key, echoed back in the body as some servers do: a client must not show it."""
        if self.dialect == "bedrock":
            return web.json_response(
                {"message": f"The security token included in the request is invalid: {presented}"},
                status=403,
                headers={"x-amzn-ErrorType": "UnrecognizedClientException:"},
            )
        if self.dialect == "voyage":
            return web.json_response({"detail": f"Provided API key is invalid: {presented}"}, status=401)
        return web.json_response({"error": {"message": f"Incorrect API key provided: {presented}"}}, status=401)

    def _too_many(self, count: int) -> web.Response | None:
        if self.max_batch is not None and count > self.max_batch:
            return web.json_response(
                {
                    "error": f"batch size {count} > maximum allowed batch size {self.max_batch}",
                    "error_type": "validation",
                },
                status=413,
            )
        return None

    def _rows(self, texts: list[str], side: str) -> list[list[float]]:
        size = self.served_dimension or self.dimension
        return [vector(f"{side}|{text}", size) for text in texts]

    # -- the dialects --------------------------------------------------------------------------------

    async def openai(self, request: web.Request) -> web.Response:
        if self.dialect == "azure":
            presented = request.headers.get("api-key", "")
            if "api-version" not in request.query:
                return web.json_response({"error": {"message": "api-version is required"}}, status=400)
        else:
            presented = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if presented != self.key:
            return self._unauthorized(presented)
        if (fault := await self._fault()) is not None:
            return fault
        body = await request.json()
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        side = body.get("input_type", "") if self.dialect == "voyage" else ""
        if self.dialect == "voyage" and side not in ("document", "query"):
            return web.json_response({"detail": "input_type must be document or query"}, status=400)
        if (refused := self._too_many(len(texts))) is not None:
            return refused
        self.received.append(Received(path=request.path, texts=texts, side=side, body=body))
        rows = self._rows(texts, side)
        encode = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(struct.pack(f"<{len(row)}f", *row)).decode() if encode else row,
            }
            for i, row in enumerate(rows)
        ]
        if self.dialect != "voyage":
            data.reverse()  # OpenAI's API does not promise order: a client sorts by index
        usage = {"total_tokens": sum(len(text.split()) for text in texts)}
        return web.json_response({"object": "list", "data": data, "model": body.get("model"), "usage": usage})

    async def cohere(self, request: web.Request) -> web.Response:
        presented = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if presented != self.key:
            return self._unauthorized(presented)
        if (fault := await self._fault()) is not None:
            return fault
        body = await request.json()
        sides = {"search_document": "document", "search_query": "query"}
        if body.get("input_type") not in sides or body.get("embedding_types") != ["float"]:
            return web.json_response({"message": "input_type and embedding_types are required"}, status=400)
        if len(body["texts"]) > 96:
            return web.json_response({"message": "too many texts: at most 96"}, status=400)
        side = sides[body["input_type"]]
        self.received.append(Received(path=request.path, texts=body["texts"], side=side, body=body))
        return web.json_response(
            {"id": "x", "embeddings": {"float": self._rows(body["texts"], side)}, "texts": body["texts"]}
        )

    async def gemini(self, request: web.Request) -> web.Response:
        presented = request.headers.get("x-goog-api-key", "")
        if presented != self.key:
            return web.json_response(
                {"error": {"code": 400, "message": f"API key not valid: {presented}", "status": "INVALID_ARGUMENT"}},
                status=400 if not presented else 403,
            )
        if (fault := await self._fault()) is not None:
            return fault
        model, _, method = request.match_info["call"].partition(":")
        body = await request.json()
        if method != "batchEmbedContents" or len(body["requests"]) > 100:
            return web.json_response({"error": {"code": 400, "message": "bad batch"}}, status=400)
        sides = {"RETRIEVAL_DOCUMENT": "document", "RETRIEVAL_QUERY": "query"}
        texts, found = [], set()
        for item in body["requests"]:
            if item["model"] != f"models/{model}":
                return web.json_response({"error": {"code": 400, "message": "model mismatch"}}, status=400)
            texts.append("".join(part["text"] for part in item["content"]["parts"]))
            found.add(sides.get(item.get("taskType", ""), ""))
        (side,) = found
        self.received.append(Received(path=request.path, texts=texts, side=side, body=body))
        return web.json_response({"embeddings": [{"values": row} for row in self._rows(texts, side)]})

    async def bedrock(self, request: web.Request) -> web.Response:
        signed = request.headers.get("Authorization", "")
        presented = signed.partition("Credential=")[2].partition("/")[0]
        if not signed.startswith("AWS4-HMAC-SHA256 ") or presented != AWS_ACCESS_KEY:
            return self._unauthorized(presented)
        if (fault := await self._fault()) is not None:
            return fault
        model = request.match_info["model"]
        body = json.loads(await request.read())
        if "cohere" in model:
            sides = {"search_document": "document", "search_query": "query"}
            side = sides[body["input_type"]]
            self.received.append(Received(path=request.path, texts=body["texts"], side=side, body=body))
            return web.json_response({"embeddings": self._rows(body["texts"], side), "id": "x", "texts": body["texts"]})
        if set(body) - {"inputText", "dimensions", "normalize", "embeddingTypes"}:
            return web.json_response(
                {"message": f"extraneous key {sorted(set(body) - {'inputText'})}"},
                status=400,
                headers={"x-amzn-ErrorType": "ValidationException:"},
            )
        self.received.append(Received(path=request.path, texts=[body["inputText"]], side="", body=body))
        (row,) = self._rows([body["inputText"]], "")
        return web.json_response({"embedding": row, "inputTextTokenCount": len(body["inputText"].split())})

    async def rerank(self, request: web.Request) -> web.Response:
        """Relevance = the share of the query's words in the document (deterministic, order-revealing)."""
        presented = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if presented != self.key:
            return self._unauthorized(presented)
        if (fault := await self._fault()) is not None:
            return fault
        body = await request.json()
        documents = body["texts"] if self.dialect == "tei-rerank" else body["documents"]
        self.received.append(Received(path=request.path, texts=[body["query"], *documents], side="", body=body))
        query = set(body["query"].lower().split())
        scores = [len(query & set(doc.lower().split())) / max(len(query), 1) for doc in documents]
        if self.dialect == "tei-rerank":
            ranked = [{"index": i, "score": s} for i, s in enumerate(scores)]
            ranked.sort(key=lambda r: -r["score"])
            return web.json_response(ranked)
        results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
        results.sort(key=lambda r: (-r["relevance_score"], r["index"]))
        if self.dialect == "voyage":  # Voyage's own shape: data[], cut at top_k
            data = results[: body["top_k"]] if body.get("top_k") else results
            usage = {"total_tokens": 1}
            return web.json_response({"object": "list", "data": data, "model": body.get("model"), "usage": usage})
        if body.get("top_n"):
            results = results[: body["top_n"]]
        return web.json_response({"id": "x", "results": results, "meta": {}})

    async def chat(self, request: web.Request) -> web.Response:
        """A chat completion: ``{"software": "<answer> (<name>)."}`` for the name the question gives."""
        presented = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if presented != self.key:
            return self._unauthorized(presented)
        if (fault := await self._fault()) is not None:
            return fault
        body = await request.json()
        question = "".join(m["content"] for m in body["messages"] if m["role"] == "user")
        self.received.append(Received(path=request.path, texts=[question], side="", body=body))
        name = next((line[6:] for line in question.splitlines() if line.startswith("name: ")), "?")
        content = json.dumps({"software": f"{self.answer} ({name})."})
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return web.json_response({"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice]})


ROUTES = {
    "openai": [("/v1/embeddings", "openai")],
    "azure": [("/openai/deployments/{deployment}/embeddings", "openai")],
    "voyage": [("/v1/embeddings", "openai"), ("/v1/rerank", "rerank")],
    "cohere": [("/v2/embed", "cohere")],
    "gemini": [("/v1beta/models/{call}", "gemini")],
    "bedrock": [("/model/{model}/invoke", "bedrock")],
    "cohere-rerank": [("/v2/rerank", "rerank"), ("/v1/rerank", "rerank")],
    "tei-rerank": [("/rerank", "rerank")],
    "openai-chat": [("/v1/chat/completions", "chat")],
}
#: What a client's base URL is, per dialect (the part before the paths above that it adds itself).
BASES = {"openai": "/v1", "voyage": "/v1", "gemini": "/v1beta", "cohere-rerank": "/v2", "openai-chat": "/v1"}


@asynccontextmanager
async def running(standin: StandIn, *, port: int | None = None) -> AsyncIterator[StandIn]:
    """Serve ``standin`` on loopback (``port``: the one it had, to come back where clients look)."""
    app = web.Application()
    for path, handler in ROUTES[standin.dialect]:
        app.router.add_post(path, getattr(standin, handler))
    runner = web.AppRunner(app)
    await runner.setup()
    port = port or free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    standin.url = f"http://127.0.0.1:{port}{BASES.get(standin.dialect, '')}"
    try:
        yield standin
    finally:
        await runner.cleanup()


@contextlib.contextmanager
def in_a_thread(standin: StandIn, *, port: int | None = None) -> Iterator[StandIn]:
    """``standin`` served on a loop of its own, for subprocesses (the CLI, a controller) to call."""
    ready = threading.Event()
    stop = threading.Event()

    async def serve() -> None:
        async with running(standin, port=port):
            ready.set()
            await asyncio.to_thread(stop.wait)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(30), "the stand-in never started"
        yield standin
    finally:
        stop.set()
        thread.join(timeout=10)
