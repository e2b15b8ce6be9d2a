"""The wheel installs one top-level package, ``kubevec``, holding every module of its folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The top-level folders the wheel lays out as ``kubevec/<folder>``, as pyproject maps them.
FOLDERS = tuple(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built as ``pip wheel`` builds it, from a copy: setuptools leaves build/ behind, whose stale files would ship."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet"]
    built = subprocess.run(
        [*pip, str(source), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("kubevec-*.whl")
    return path


def shipped_sources() -> set[str]:
    """What the wheel must hold: every module and data file of the folders, under ``kubevec/``."""
    files = set()
    for folder in FOLDERS:
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                files.add("kubevec/" + path.relative_to(REPO).as_posix())
    return files


def test_the_only_top_level_package_is_kubevec(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"kubevec", wheel.name.split("-py3")[0] + ".dist-info"}
    assert not any(name.startswith("kubevec/__init__") for name in names)  # a namespace: nothing else can own it


def test_every_module_and_data_file_is_in_the_wheel(wheel: Path) -> None:
    """A new sub-package missing from pyproject's explicit ``packages`` list would ship without its modules."""
    names = {name for name in zipfile.ZipFile(wheel).namelist() if not name.startswith("kubevec-")}
    assert names == shipped_sources()


def test_the_installed_wheel_runs_from_its_own_files(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    entry_points = next(target.glob("kubevec-*.dist-info")).joinpath("entry_points.txt").read_text(encoding="utf-8")
    assert "kubevec = kubevec.controller.cli:main" in entry_points
    probe = (
        "import importlib.util, kubevec.controller.cli, kubevec.inference.tokens as tokens;"
        "print(kubevec.controller.cli.__file__);"
        "print(tokens.count_tokens('a managed postgres database'));"
        "print(importlib.util.find_spec('controller'))"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    module, tokens, bare = ran.stdout.splitlines()
    assert Path(module).is_relative_to(target)
    assert int(tokens) > 2  # the packaged tokenizer data came along
    assert bare == "None"  # no generic `controller` package anywhere


def test_the_controller_imports_no_query_stack_until_it_serves_queries() -> None:
    """``kubevec run`` without the MCP port never needs the mcp SDK, its web stack or the keyword index (tantivy)."""
    code = (
        "import sys, controller.operator; "
        "print(sorted(m for m in ('mcp', 'tantivy', 'starlette', 'uvicorn') if m in sys.modules))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "[]"
