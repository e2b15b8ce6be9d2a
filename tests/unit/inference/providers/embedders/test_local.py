"""The model's sha256 is checked once per file identity by one-shot commands, never skipped for a changed file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.embedders import local


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = local._hash_and_compare

    def counting(*, path: Path, expected: str) -> None:
        calls.append(path)
        real(path=path, expected=expected)

    monkeypatch.setattr(local, "_hash_and_compare", counting)
    return calls


def test_a_verified_file_is_not_hashed_again_until_it_changes(tmp_path: Path, hashed: list[Path]) -> None:
    model, verified = tmp_path / "model.onnx", tmp_path / "cache" / "verified-models"
    model.write_bytes(b"weights v1")
    good = hashlib.sha256(b"weights v1").hexdigest()
    local.verify_sha256(path=model, expected=good, verified_dir=verified)
    local.verify_sha256(path=model, expected=good, verified_dir=verified)
    assert len(hashed) == 1
    assert (verified / f"{good}.verified").is_file()

    model.write_bytes(b"weights v2, tampered")  # another size and mtime: hashed again, and refused
    with pytest.raises(EmbedderError, match="sha256"):
        local.verify_sha256(path=model, expected=good, verified_dir=verified)
    assert len(hashed) == 2


def test_same_size_and_mtime_but_another_file_is_hashed(tmp_path: Path, hashed: list[Path]) -> None:
    model, verified = tmp_path / "model.onnx", tmp_path / "verified"
    model.write_bytes(b"weights v1")
    good = hashlib.sha256(b"weights v1").hexdigest()
    local.verify_sha256(path=model, expected=good, verified_dir=verified)
    stat = model.stat()
    replacement = tmp_path / "replacement"
    replacement.write_bytes(b"weights v9")  # same size
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(replacement, model)  # a new inode under the same name
    with pytest.raises(EmbedderError, match="sha256"):
        local.verify_sha256(path=model, expected=good, verified_dir=verified)


def test_a_refused_file_is_never_recorded_and_an_unwritable_cache_only_costs_a_hash(
    tmp_path: Path, hashed: list[Path]
) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights")
    with pytest.raises(EmbedderError):
        local.verify_sha256(path=model, expected="0" * 64, verified_dir=tmp_path / "verified")
    assert not (tmp_path / "verified" / f"{'0' * 64}.verified").exists()
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the directory would go")
    good = hashlib.sha256(b"weights").hexdigest()
    for _ in range(2):
        local.verify_sha256(path=model, expected=good, verified_dir=blocked / "verified")
    assert len(hashed) == 3
