"""Layer rules from DESIGN.md, checked on the source (import-linter covers the package graph).

Here: only the controller imports kopf, only backends/chroma*.py import chromadb, only
backends/qdrant*.py import qdrant_client, and only backends/pgvector*.py import psycopg and
pgvector; nothing outside controller/settings.py reads os.environ.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("controller", "backends", "inference", "query")


def imported_roots(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module.split(".")[0]


def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def allowed(module: str, path: Path) -> bool:
    rel = path.relative_to(REPO)
    if module == "kopf":
        return rel.parts[0] == "controller"
    if module == "chromadb":
        return rel.parts[0] == "backends" and rel.name.startswith("chroma")
    if module == "qdrant_client":
        return rel.parts[0] == "backends" and rel.name.startswith("qdrant")
    if module in ("psycopg", "psycopg_pool", "pgvector"):
        return rel.parts[0] == "backends" and rel.name.startswith("pgvector")
    return True


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_restricted_imports_stay_in_their_modules(path: Path) -> None:
    offending = [f"{path.name}:{line} imports {mod}" for line, mod in imported_roots(path) if not allowed(mod, path)]
    assert not offending


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_only_settings_reads_the_environment(path: Path) -> None:
    if path.relative_to(REPO).as_posix() == "controller/settings.py":
        return
    text = path.read_text()
    assert "os.environ" not in text
    assert "os.getenv" not in text


def test_checker_catches_a_violation(tmp_path: Path) -> None:
    """The rule itself must be able to fail."""
    bad = REPO / "backends" / "memory.py"
    assert not allowed("chromadb", bad)
    assert not allowed("kopf", REPO / "query" / "search.py")
    assert allowed("kopf", REPO / "controller" / "handlers.py")


def test_the_controller_imports_no_query_stack_until_it_serves_queries() -> None:
    """``kubevec run`` without the MCP port never needs the mcp SDK, its web stack or bm25s (~42 MiB)."""
    import subprocess
    import sys

    code = (
        "import sys, controller.operator; "
        "print(sorted(m for m in ('mcp', 'bm25s', 'starlette', 'uvicorn') if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"


def test_kopfs_private_api_is_used_in_one_package_only() -> None:
    """issue 31: five modules reached into ``kopf._cogs``; a kopf upgrade now touches controller/kopf_private only.
    (import-linter cannot forbid an external package's subpackages, so this reads the sources.)"""
    import re

    private = re.compile(r"^\s*(?:from|import)\s+kopf\._|[\"']kopf\._", re.M)  # an import, or a private name
    offenders = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "controller").rglob("*.py"))
        if "kopf_private" not in path.parts and private.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert private.search((REPO / "controller" / "kopf_private" / "discovery.py").read_text(encoding="utf-8"))


def test_kopfs_watch_restarts_are_lifted_once_however_often_install_runs() -> None:
    import logging

    from kubevec.controller.kopf_private import WATCHING_LOGGER, lift_watch_restarts
    from kubevec.controller.runtime.logs import WatchRestartFilter

    watching = logging.getLogger(WATCHING_LOGGER)
    before = list(watching.filters)
    try:
        lift_watch_restarts()
        lift_watch_restarts()
        assert sum(isinstance(f, WatchRestartFilter) for f in watching.filters) == 1
        assert watching.level == logging.DEBUG  # its 410 lines reach the filter, which lifts them
    finally:
        watching.filters[:] = before
        watching.setLevel(logging.NOTSET)
