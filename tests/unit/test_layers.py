"""What the import contracts cannot say, checked on the source.

The import rules themselves (which package may import which, which module alone imports kopf or a
store's client library) are import-linter contracts in ``pyproject.toml``, run by ``make lint``. Here:
nothing outside ``controller/settings.py`` reads the environment, kopf's private API stays in one folder,
the controller loads no query stack until it serves queries, and the wheel's package list matches the
folders (a package missing from it ships without its modules; one listed that is gone breaks the build).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
PACKAGES = tuple(PACKAGE_DIRS.values())


def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def folder_packages(root: Path = REPO) -> set[str]:
    """``kubevec.<dotted folder>`` for every folder with an ``__init__.py`` under a mapped top-level folder."""
    found = set()
    for name, folder in PACKAGE_DIRS.items():
        for init in (root / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(root / folder)
            found.add(".".join([name, *rel.parts]))
    return found


def test_the_wheels_package_list_is_the_folders() -> None:
    assert set(PYPROJECT["tool"]["setuptools"]["packages"]) == folder_packages()


def test_every_top_level_folder_with_code_is_mapped_and_checked() -> None:
    """A new top-level package must join the namespace, the Makefile's list and mypy's."""
    folders = {p.parent.name for p in REPO.glob("*/__init__.py")} - {"tests"}
    assert folders == set(PACKAGES)
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert f"PACKAGES := {' '.join(PACKAGES)}" in makefile


def test_the_static_tools_see_every_package_through_a_committed_link() -> None:
    """mypy, import-linter and editors read ``.typecheck/kubevec/<folder>``: one link per package, to its folder."""
    links = REPO / ".typecheck" / "kubevec"
    assert {p.name for p in links.iterdir()} == set(PACKAGES)
    for folder in PACKAGES:
        assert (links / folder).is_symlink()
        assert (links / folder).resolve() == (REPO / folder).resolve()


def test_a_new_subpackage_is_seen(tmp_path: Path) -> None:
    (tmp_path / "query" / "newpart").mkdir(parents=True)
    (tmp_path / "query" / "__init__.py").touch()
    (tmp_path / "query" / "newpart" / "__init__.py").touch()
    assert folder_packages(tmp_path) == {"kubevec.query", "kubevec.query.newpart"}


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_only_settings_reads_the_environment(path: Path) -> None:
    # resident.py hashes the environment before any settings exist (which reader may answer), never configures from it
    if path.relative_to(REPO).as_posix() in ("controller/settings.py", "controller/cli/resident.py"):
        return
    text = path.read_text()
    assert "os.environ" not in text
    assert "os.getenv" not in text


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


#: Modules a reader can hold (issue 49): a module past this is split by what it holds.
MAX_MODULE_LINES = 600


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    long = {
        str(path.relative_to(REPO)): lines
        for folder in PACKAGES
        for path in (REPO / folder).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"split these by concern (at most {MAX_MODULE_LINES} lines): {long}"
