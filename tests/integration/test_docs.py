"""The documentation site builds strictly (a broken link or anchor fails), and README stays a front door."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MKDOCS = str(Path(sys.executable).with_name("mkdocs"))


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """As `make docs` builds it: from the repository root, the config on stdin."""
    return subprocess.run(
        [MKDOCS, "build", "-f", "-", "--site-dir", str(site)],  # not --quiet: it hides the warnings strict counts
        input=(root / "docs" / "mkdocs.yml").read_text(encoding="utf-8"),
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = build(REPO, tmp_path / "site")
    assert built.returncode == 0, built.stdout + built.stderr
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    for page in (
        "architecture",
        "install",
        "searching",
        "models",
        "configuration",
        "security",
        "operations",
        "performance",
    ):
        assert (site / page / "index.html").is_file(), page


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs)
    with (docs / "security.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [the missing page](nowhere.md) and [a missing part](operations.md#no-such-part).\n")
    built = build(tmp_path, tmp_path / "site")
    assert built.returncode != 0
    assert "nowhere.md" in built.stdout + built.stderr


def test_readme_is_a_front_door_whose_links_lead_somewhere() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for target in re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme):
        assert (REPO / target).is_file(), target
    assert "make demo" in readme
    assert "make test" in readme
