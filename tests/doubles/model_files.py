"""Tiny ONNX models written by the tests, laid out as sentence-transformers exports are on model hubs.

The "transformer" is an embedding lookup: token ``i`` becomes row ``i`` of a seeded random table,
so a test computes exactly what each pooling must give. The tokenizer is a word-level
``tokenizer.json`` with [CLS]/[SEP] around every text, as BERT's. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, pre_tokenizers, processors

WORDS = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "query", "passage", "search_query", ":", "alpha", "beta", "gamma", "delta",
    "managed", "postgres", "database", "certificate", "tls", "web", "server", "payments",
]  # fmt: skip
DIMENSION = 8
PAD, UNK, CLS, SEP = 0, 1, 2, 3


def table(seed: int = 7) -> npt.NDArray[np.float32]:
    return np.random.default_rng(seed).normal(size=(len(WORDS), DIMENSION)).astype(np.float32)


def ids(text: str, *, max_length: int | None = None) -> list[int]:
    """What the tokenizer gives: [CLS] words [SEP], truncated to ``max_length`` pieces."""
    vocab = {word: i for i, word in enumerate(WORDS)}
    pieces = [vocab.get(word, UNK) for word in text.replace(":", " : ").split()]
    out = [CLS, *pieces, SEP]
    if max_length is not None and len(out) > max_length:
        out = [*out[: max_length - 1], SEP]
    return out


def tokenizer_json() -> str:
    tokenizer = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", CLS), ("[SEP]", SEP)]
    )
    return tokenizer.to_str()


def embedding_model(weights: npt.NDArray[np.float32], *, pooled: bool = False) -> bytes:
    """``last_hidden_state`` = weights[input_ids]; or, ``pooled``, ``sentence_embedding`` = its mean over tokens."""
    table_init = numpy_helper.from_array(weights, name="table")
    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", DIMENSION])]
    if pooled:
        nodes.append(
            helper.make_node("ReduceMean", ["last_hidden_state"], ["sentence_embedding"], axes=[1], keepdims=0)
        )
        outputs = [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", DIMENSION])]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        outputs,
        initializer=[table_init],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13 if not pooled else 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def cross_encoder_model(weights: npt.NDArray[np.float32]) -> bytes:
    """``logits`` (batch, 1) = sum over tokens of weights[input_ids] . ones: a relevance a test can compute."""
    column = numpy_helper.from_array(weights.sum(axis=1, keepdims=True).astype(np.float32), name="column")
    nodes = [
        helper.make_node("Gather", ["column", "input_ids"], ["per_token"], axis=0),  # (batch, tokens, 1)
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask3"]),
        helper.make_node("Mul", ["per_token", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["logits"], keepdims=0),  # (batch, 1)
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            column,
            numpy_helper.from_array(np.array([2], dtype=np.int64), name="axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), name="axis1"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def write_folder(
    root: Path,
    *,
    pooling: str | None = "mean",
    max_seq_length: int | None = 16,
    prompts: dict[str, str] | None = None,
    onnx_subdir: bool = False,
    pooled: bool = False,
    seed: int = 7,
    extra_pooling: dict[str, Any] | None = None,
) -> tuple[Path, str]:
    """A model folder; returns it and the sha256 of its model.onnx."""
    root.mkdir(parents=True, exist_ok=True)
    data = embedding_model(table(seed), pooled=pooled)
    onnx_path = root / "onnx" / "model.onnx" if onnx_subdir else root / "model.onnx"
    onnx_path.parent.mkdir(parents=True, exist_ok=True)
    onnx_path.write_bytes(data)
    (root / "tokenizer.json").write_text(tokenizer_json(), encoding="utf-8")
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]
    if pooling is not None:
        modules.append({"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"})
        flags = {
            "pooling_mode_cls_token": pooling == "cls",
            "pooling_mode_mean_tokens": pooling == "mean",
            "pooling_mode_max_tokens": pooling == "max",
            "pooling_mode_mean_sqrt_len_tokens": False,
            "pooling_mode_weightedmean_tokens": False,
            "pooling_mode_lasttoken": pooling == "lasttoken",
            **(extra_pooling or {}),
        }
        (root / "1_Pooling").mkdir(exist_ok=True)
        (root / "1_Pooling" / "config.json").write_text(
            json.dumps({"word_embedding_dimension": DIMENSION, **flags}), encoding="utf-8"
        )
    modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    (root / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    if max_seq_length is not None:
        (root / "sentence_bert_config.json").write_text(
            json.dumps({"max_seq_length": max_seq_length, "do_lower_case": False}), encoding="utf-8"
        )
    if prompts is not None:
        (root / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}), encoding="utf-8")
    return root, hashlib.sha256(data).hexdigest()


def write_cross_encoder(root: Path, *, seed: int = 11) -> tuple[Path, str]:
    root.mkdir(parents=True, exist_ok=True)
    data = cross_encoder_model(table(seed))
    (root / "model.onnx").write_bytes(data)
    (root / "tokenizer.json").write_text(tokenizer_json(), encoding="utf-8")
    return root, hashlib.sha256(data).hexdigest()


def expected(
    text: str, *, pooling: str, max_length: int | None = 16, seed: int = 7, prefix: str = ""
) -> npt.NDArray[np.float32]:
    """The unit vector the folder's model gives ``text`` under ``pooling``."""
    rows = table(seed)[ids(prefix + text, max_length=max_length)]
    pooled = {
        "cls": rows[0],
        "mean": rows.mean(axis=0),
        "max": rows.max(axis=0),
        "lasttoken": rows[-1],
    }[pooling]
    out: npt.NDArray[np.float32] = (pooled / np.linalg.norm(pooled)).astype(np.float32)
    return out
