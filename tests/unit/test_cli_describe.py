"""`kubevec describe`: what an agent will see, as text or JSON; clear errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.cli import main
from tests.conftest import SHARED_CRDS


def test_describe_json_multi_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    combined = tmp_path / "two.yaml"
    combined.write_text(
        (SHARED_CRDS / "velero" / "backups.velero.io.yaml").read_text()
        + "\n---\n"
        + (SHARED_CRDS / "velero" / "restores.velero.io.yaml").read_text()
    )
    assert main(["describe", "--json", str(combined)]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in docs] == ["backups.velero.io", "restores.velero.io"]
    assert docs[0]["metadata"]["kind"] == "Backup"


def test_describe_text_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", str(SHARED_CRDS / "cert-manager")]) == 0
    out = capsys.readouterr().out
    assert "# certificates.cert-manager.io" in out
    assert out.count("# ") == 6


def test_describe_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", str(tmp_path / "missing.yaml")]) == 1
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [")
    assert main(["describe", str(bad)]) == 1
    assert "not valid YAML" in capsys.readouterr().err
    empty = tmp_path / "cm.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert main(["describe", str(empty)]) == 1
    assert "no CustomResourceDefinitions" in capsys.readouterr().err
