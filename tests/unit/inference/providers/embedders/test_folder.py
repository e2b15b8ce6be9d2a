"""Any sentence-transformers ONNX folder, offline: pooling, window, prompts and checks read from its files.

The models are tiny ones written by the test (tests/doubles/model_files.py), so each expected vector is
computed here exactly; the packaged MiniLM goes through the same code and is held to the upstream
reference vectors in tests/integration/test_embedder_local.py.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.config import EmbedderSettings, make_embedder
from kubevec.inference.providers.embedders.folder import read_model_folder
from kubevec.inference.providers.embedders.local import LocalEmbedder
from tests.doubles.model_files import DIMENSION, expected, write_folder


def local(directory: Path, sha: str, **settings: object) -> LocalEmbedder:
    made = make_embedder(EmbedderSettings(model_dir=directory, model_sha256=sha, **settings))  # type: ignore[arg-type]
    assert isinstance(made, LocalEmbedder)
    return made


@pytest.mark.parametrize("pooling", ["cls", "mean", "max", "lasttoken"])
async def test_each_pooling_the_folder_names_gives_its_vectors(tmp_path: Path, pooling: str) -> None:
    directory, sha = write_folder(tmp_path / f"tiny-{pooling}", pooling=pooling)
    made = local(directory, sha)
    texts = ["alpha", "managed postgres database", "tls certificate web server payments"]
    vectors = await made.embed_documents(texts)  # one batch: short rows padded to the longest
    for text, vector in zip(texts, vectors, strict=True):
        assert np.allclose(vector, expected(text, pooling=pooling), atol=1e-5), text
    alone = await made.embed_documents(["alpha"])
    assert np.allclose(alone[0], vectors[0], atol=1e-5)  # padding changed nothing
    assert made.dimension == DIMENSION
    assert made.name == f"tiny-{pooling}"


async def test_the_window_comes_from_the_folder_and_a_clipped_text_is_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory, sha = write_folder(tmp_path / "tiny", pooling="mean", max_seq_length=4)
    made = local(directory, sha)
    with caplog.at_level(logging.WARNING):
        (vector,) = await made.embed_documents(["alpha beta gamma delta"])
    assert np.allclose(vector, expected("alpha beta", pooling="mean"), atol=1e-5)  # [CLS] alpha beta [SEP]
    assert made.truncated == 1
    assert "Clipped texts to the model's window model=tiny count=1 window=4" in caplog.text


async def test_prompts_in_the_folder_are_the_prefixes_and_settings_override_them(tmp_path: Path) -> None:
    directory, sha = write_folder(tmp_path / "e5ish", prompts={"query": "query: ", "document": "passage: "})
    made = local(directory, sha)
    query = await made.embed_query("managed postgres")
    (document,) = await made.embed_documents(["managed postgres"])
    assert np.allclose(query, expected("managed postgres", pooling="mean", prefix="query: "), atol=1e-5)
    assert np.allclose(document, expected("managed postgres", pooling="mean", prefix="passage: "), atol=1e-5)
    plain = local(directory, sha, query_prefix="", document_prefix="")
    assert np.allclose(await plain.embed_query("managed postgres"), expected("managed postgres", pooling="mean"))
    assert made.name != plain.name  # other prefixes, other vectors: the store must notice


async def test_a_model_that_pools_itself_and_sits_in_onnx_subfolder(tmp_path: Path) -> None:
    directory, sha = write_folder(tmp_path / "pooled", pooled=True, onnx_subdir=True, pooling="mean")
    (vector,) = await local(directory, sha).embed_documents(["web server"])
    assert np.allclose(vector, expected("web server", pooling="mean"), atol=1e-5)


def test_a_folder_without_a_pooling_config_needs_the_setting(tmp_path: Path) -> None:
    directory, sha = write_folder(tmp_path / "nopool", pooling=None)
    with pytest.raises(EmbedderError, match="KUBEVEC_EMBEDDER__POOLING"):
        local(directory, sha)
    assert local(directory, sha, pooling="cls").folder.pooling == "cls"


def test_what_kubevec_cannot_pool_is_refused_by_name(tmp_path: Path) -> None:
    directory, _ = write_folder(
        tmp_path / "sqrt", pooling="mean", extra_pooling={"pooling_mode_mean_sqrt_len_tokens": True}
    )
    with pytest.raises(EmbedderError, match="asks for pooling_mode_mean_sqrt_len_tokens"):
        read_model_folder(directory)
    directory, _ = write_folder(tmp_path / "weighted", pooling=None)
    (directory / "1_Pooling").mkdir()
    (directory / "1_Pooling" / "config.json").write_text('{"pooling_mode_weightedmean_tokens": true}')
    with pytest.raises(EmbedderError, match="pooling_mode_weightedmean_tokens"):
        read_model_folder(directory)


def test_a_model_file_that_is_not_the_one_named_is_refused(tmp_path: Path) -> None:
    directory, sha = write_folder(tmp_path / "tiny")
    (directory / "model.onnx").write_bytes((directory / "model.onnx").read_bytes() + b"\0")
    with pytest.raises(EmbedderError, match="sha256"):
        local(directory, sha)


def test_missing_files_and_settings_are_named(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="is not a directory"):
        read_model_folder(tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EmbedderError, match=r"No model.onnx or onnx/model.onnx"):
        read_model_folder(empty)
    directory, _ = write_folder(tmp_path / "notok")
    (directory / "tokenizer.json").unlink()
    with pytest.raises(EmbedderError, match=r"No tokenizer\.json"):
        read_model_folder(directory)
    with pytest.raises(ValueError, match="model_dir needs model_sha256"):
        EmbedderSettings(model_dir=directory)
    directory, _ = write_folder(tmp_path / "badjson")
    (directory / "modules.json").write_text("{not json")
    with pytest.raises(EmbedderError, match=r"modules\.json is not valid JSON"):
        read_model_folder(directory)
