"""Test doubles that are honest about what they are: a deterministic embedder that counts calls."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from kubevec.core.errors import EmbedderUnavailable


class CountingEmbedder:
    """Deterministic vectors from a text hash; counts texts embedded; can be made to fail."""

    def __init__(self, dimension: int = 16) -> None:
        self._dimension = dimension
        self.texts: list[str] = []
        self.queries: list[str] = []
        self.failing = False

    @property
    def name(self) -> str:
        return "counting-test-embedder"

    @property
    def dimension(self) -> int:
        return self._dimension

    def vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        raw = [digest[i % len(digest)] - 127.5 for i in range(self._dimension)]
        norm = math.sqrt(sum(x * x for x in raw))
        return [x / norm for x in raw]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failing:
            raise EmbedderUnavailable("simulated embedder outage")
        self.texts.extend(texts)
        return [self.vector(t) for t in texts]

    async def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        if self.failing:
            raise EmbedderUnavailable("simulated embedder outage")
        return self.vector(text)
