"""Optional LLM refinement of capability documents, and notes on what workloads are (both off by default).

The schema describer always runs first; an LLM (Anthropic Messages API or any OpenAI-compatible
chat endpoint) may then rewrite the description, use case and capability phrases. The answer must
be JSON that validates against :class:`Refinement`; anything else (HTTP error, timeout, invalid
JSON) falls back to the schema document, logged once. Answers are cached on disk by a hash of the
model and prompt, so an unchanged CRD is never asked about twice, also across restarts.

With ``workloads`` on, the same client says in one sentence what a workload's software is and does
(:meth:`LLMDescriber.describe_workload`), asked once per pod template's facts: a small embedding
model cannot tell a trace UI or a load generator from an image name. The facts are built from the
object after the gate (``inference/instances/workloads.py``), so nothing the gate drops is sent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kubevec.core.clock import SYSTEM_CLOCK, Clock
from kubevec.core.errors import LLMError
from kubevec.inference.capabilities import CapabilityDoc
from kubevec.inference.tokens import MAX_TOKENS, count_tokens

logger = logging.getLogger(__name__)

PROMPT_VERSION: Final = 1
SYSTEM_PROMPT: Final = (
    "You describe Kubernetes resource types for a search index used by AI agents. "
    "Answer with one JSON object and nothing else, with keys: "
    '"description" (2-3 plain sentences: what the resource does and when to use it), '
    '"use_case" (one sentence in the words a platform engineer would use to ask for it), '
    '"capabilities" (3-6 short phrases), "providers" (cloud providers it integrates with, from aws, gcp, azure; '
    'may be empty), "complexity" ("low", "medium" or "high").'
)


WORKLOAD_PROMPT: Final = (
    "You say what software runs in a Kubernetes workload, for a search index used by AI agents. "
    "You are given its kind, name, images, containers, ports and labels. Answer with one JSON object and "
    'nothing else, with one key: "software": one plain sentence of at most 30 words naming the software and '
    "what it does (for example: a trace UI, a message broker, a load generator, a GitOps controller that syncs "
    'from git, the web front end of a shop), or "unknown" when the facts do not tell.'
)


class SoftwareNote(BaseModel):
    """What the LLM must return about a workload."""

    model_config = ConfigDict(extra="ignore")

    software: str = Field(min_length=3, max_length=300)


class Refinement(BaseModel):
    """What the LLM must return."""

    model_config = ConfigDict(extra="ignore")

    description: str = Field(min_length=10, max_length=1200)
    use_case: str = Field(min_length=5, max_length=400)
    capabilities: list[str] = Field(min_length=1, max_length=8)
    providers: list[Literal["aws", "gcp", "azure"]] = Field(default_factory=list, max_length=3)
    complexity: Literal["low", "medium", "high"]


_Answer = TypeVar("_Answer", bound=BaseModel)


class LLMDescriber:
    """Refines CapabilityDocs with an LLM; never raises, falls back to the document it was given."""

    def __init__(
        self,
        *,
        provider: Literal["anthropic", "openai"],
        url: str,
        model: str,
        api_key: str | None,
        cache_dir: Path,
        requests_per_minute: float = 30.0,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._clock = clock
        self._provider = provider
        self._url = url.rstrip("/")
        self._model = model
        self._api_key = api_key
        self._cache_dir = cache_dir
        self._interval = 60.0 / requests_per_minute if requests_per_minute > 0 else 0.0
        self._next_slot = 0.0
        self._lock = asyncio.Lock()
        self._client = httpx.AsyncClient(timeout=timeout, transport=transport)
        self.requests_made = 0
        self.cache_hits = 0
        self.failures = 0

    async def close(self) -> None:
        await self._client.aclose()

    async def refine(self, doc: CapabilityDoc) -> CapabilityDoc:
        prompt = _prompt(doc)
        key = self._key(prompt)
        cached = self._read_cache(key, Refinement)
        if cached is not None:
            self.cache_hits += 1
        try:
            refinement = cached or Refinement.model_validate(await self._ask(prompt, system=SYSTEM_PROMPT))
        except (LLMError, httpx.HTTPError, ValidationError, ValueError) as exc:
            self.failures += 1
            logger.warning("Fell back to the schema description resource=%s error=%s", doc.id, exc)
            return doc
        if cached is None:
            self._write_cache(key, refinement)
        return apply_refinement(doc, refinement)

    def cached_workload(self, facts: str) -> SoftwareNote | None:
        """The cached answer about a workload with these facts, without asking (None: never asked)."""
        return self._read_cache(self._key(facts, kind="workload"), SoftwareNote)

    async def describe_workload(self, facts: str) -> SoftwareNote:
        """What the software with these facts is, asked once and cached; raises what the request raised.

        An answer of "unknown" is cached too: the facts will not tell more next time."""
        key = self._key(facts, kind="workload")
        if (cached := self._read_cache(key, SoftwareNote)) is not None:
            self.cache_hits += 1
            return cached
        try:
            note = SoftwareNote.model_validate(await self._ask(facts, system=WORKLOAD_PROMPT))
        except (LLMError, httpx.HTTPError, ValidationError, ValueError):
            self.failures += 1
            raise
        self._write_cache(key, note)
        return note

    def _key(self, prompt: str, *, kind: str = "capability") -> str:
        """The cache key: the prompt's version, the provider, the model and the prompt (a capability's
        key is what it was before workloads were described, so no cached answer is lost)."""
        parts: list[Any] = [PROMPT_VERSION, self._provider, self._model, prompt]
        if kind != "capability":
            parts.append(kind)
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    async def _ask(self, prompt: str, *, system: str) -> Any:
        """The answer's JSON object (parsed, not validated)."""
        await self._wait_for_slot()
        self.requests_made += 1
        if self._provider == "anthropic":
            response = await self._client.post(
                f"{self._url}/v1/messages",
                headers={"x-api-key": self._api_key or "", "anthropic-version": "2023-06-01"},
                json={
                    "model": self._model,
                    "max_tokens": 800,
                    "system": system,
                    "messages": [{"role": "user", "content": prompt}],
                },
            )
            response.raise_for_status()
            content = "".join(b.get("text", "") for b in response.json().get("content", []) if isinstance(b, dict))
        else:
            response = await self._client.post(
                f"{self._url}/chat/completions",
                headers={"Authorization": f"Bearer {self._api_key or ''}"},
                json={
                    "model": self._model,
                    "response_format": {"type": "json_object"},
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
                },
            )
            response.raise_for_status()
            content = response.json()["choices"][0]["message"]["content"]
        return _extract_json(content)

    async def _wait_for_slot(self) -> None:
        async with self._lock:
            now = self._clock.monotonic()
            delay = self._next_slot - now
            self._next_slot = max(now, self._next_slot) + self._interval
        if delay > 0:
            await self._clock.sleep(delay)

    def _read_cache(self, key: str, model: type[_Answer]) -> _Answer | None:
        path = self._cache_dir / f"{key}.json"
        try:
            return model.model_validate_json(path.read_text())
        except (OSError, ValidationError, ValueError):
            return None

    def _write_cache(self, key: str, answer: BaseModel) -> None:
        try:
            self._cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = self._cache_dir / f"{key}.tmp"
            tmp.write_text(answer.model_dump_json())
            tmp.replace(self._cache_dir / f"{key}.json")
        except OSError as exc:
            logger.warning("Could not write the LLM cache dir=%s error=%s", self._cache_dir, exc)


def _prompt(doc: CapabilityDoc) -> str:
    fields = "\n".join(f"- {line}" for line in doc.fields[:20])
    return (
        f"Kind: {doc.kind}\nGroup: {doc.group}\nScope: {doc.scope}\nShort names: {', '.join(doc.short_names)}\n"
        f"Description from the schema: {doc.description[:1500]}\nSpec fields:\n{fields}\n"
    )


def _extract_json(content: str) -> Any:
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end <= start:
        raise LLMError(f"The LLM answer has no JSON object: {content[:120]!r}")
    return json.loads(content[start : end + 1])


def apply_refinement(doc: CapabilityDoc, refinement: Refinement) -> CapabilityDoc:
    """The refined document: LLM prose first, the schema's fields after, within the model window."""
    head = f"{doc.kind} ({doc.group or 'core'}). {refinement.description} Use it to {refinement.use_case.rstrip('.')}."
    tail = f" Capabilities: {', '.join(refinement.capabilities)}."
    text = head + tail
    for line in doc.fields:
        candidate = f"{text} {line}."
        if count_tokens(candidate) > MAX_TOKENS:
            break
        text = candidate
    return dataclasses.replace(
        doc,
        description=refinement.description,
        capabilities=tuple(refinement.capabilities),
        providers=tuple(sorted(set(doc.providers) | set(refinement.providers))),
        complexity=refinement.complexity,
        source=f"{doc.source}+llm",
        text=text,
    )
