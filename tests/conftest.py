"""Fixtures shared by every test layer."""

from __future__ import annotations

from pathlib import Path

import hypothesis  # noqa: F401 - imported before any test starts threads: CPython 3.11.7 ast is not thread-safe
import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
SHARED_CRDS = SHARED / "crds"
EMBEDDING_REFERENCE = SHARED / "embedding-reference" / "all-MiniLM-L6-v2.json"


@pytest.fixture(scope="session")
def shared_crds() -> Path:
    if not SHARED_CRDS.is_dir():
        pytest.fail(f"The shared CRD corpus is missing at {SHARED_CRDS} (../shared beside the repo)")
    return SHARED_CRDS
