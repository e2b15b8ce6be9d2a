"""`kubevec describe`: what an agent will see, as text or JSON; clear errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubevec.controller.cli import main
from tests.conftest import SAMPLE_CRDS, SAMPLES


def test_describe_json_multi_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "--json", str(SAMPLE_CRDS)]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in docs][:2] == [
        "postgresclusters.databases.samples.kubevec.io",
        "connectionpoolers.databases.samples.kubevec.io",
    ]
    assert docs[0]["metadata"]["kind"] == "PostgresCluster"


def test_describe_text_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", str(SAMPLES)]) == 0  # the objects file beside it holds no CRDs: skipped
    out = capsys.readouterr().out
    assert "# certificates.pki.samples.kubevec.io" in out
    assert out.count("\n# ") + out.startswith("# ") == 7


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
