"""A cross-encoder reranker from an ONNX folder, offline (``KUBEVEC_RERANKER__PROVIDER=local``).

The folder is laid out as cross-encoder exports are on model hubs (ms-marco-MiniLM, bge-reranker,
jina-reranker): ``model.onnx`` or ``onnx/model.onnx`` and ``tokenizer.json``. Each (query, document)
pair is encoded together, as the model was trained; its logit becomes a relevance in [0, 1]
(sigmoid; a two-class head's softmax). The model file's sha256 is checked before it is loaded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from kubevec.inference.providers.embedders.folder import model_files
from kubevec.inference.providers.embedders.local import verify_sha256

#: Pairs per model run: candidates are 20 by default, at most 100.
BATCH: Final = 16


class LocalReranker:
    def __init__(self, *, model_dir: Path, model_sha256: str, max_length: int = 512, threads: int = 0) -> None:
        onnx, tokenizer_path = model_files(model_dir)
        verify_sha256(path=onnx, expected=model_sha256)
        self._name = model_dir.resolve().name
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_length, strategy="only_second")
        self._tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
        self._inputs = {item.name for item in self._session.get_inputs()}
        self._lock = threading.Lock()
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubevec-rerank")

    @property
    def name(self) -> str:
        return f"local:{self._name}"

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """Relevance of each document to ``query``, in [0, 1], in the order given."""
        out: list[float] = []
        for start in range(0, len(documents), BATCH):
            pairs = [(query, document) for document in documents[start : start + BATCH]]
            encodings = self._tokenizer.encode_batch(pairs)
            width = max(len(e.ids) for e in encodings)
            ids = np.zeros((len(pairs), width), dtype=np.int64)
            types = np.zeros((len(pairs), width), dtype=np.int64)
            mask = np.zeros((len(pairs), width), dtype=np.int64)
            for row, encoding in enumerate(encodings):
                ids[row, : len(encoding.ids)] = encoding.ids
                types[row, : len(encoding.type_ids)] = encoding.type_ids
                mask[row, : len(encoding.ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = types
            with self._lock:
                (logits,) = self._session.run(None, feeds)
            logits = np.asarray(logits, dtype=np.float64).reshape(len(pairs), -1)
            if logits.shape[1] == 2:  # a two-class head: the "relevant" class's probability
                shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
                relevance = shifted[:, 1] / shifted.sum(axis=1)
            else:
                relevance = 1.0 / (1.0 + np.exp(-logits[:, 0]))
            out.extend(float(x) for x in relevance)
        return out

    async def rerank(self, query: str, documents: Sequence[str], *, top_k: int) -> list[tuple[int, float]]:
        if not documents:
            return []
        scores = await asyncio.get_running_loop().run_in_executor(self._worker, self.scores, query, list(documents))
        ranked = sorted(enumerate(scores), key=lambda pair: -pair[1])
        return ranked[:top_k]
