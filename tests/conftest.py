"""Fixtures shared by every test layer.

The suite needs nothing outside the repository: sample CRDs live in ``deploy/samples``. Two
extras are used when present: the real-CRD corpus (``KUBEVEC_CRD_CORPUS``, default
``../shared/crds``) and upstream reference vectors (``KUBEVEC_EMBEDDING_REFERENCE``). Tests that
need one are skipped, with the reason, when it is absent; when it is present and such a test was
skipped anyway, the session fails (:func:`pytest_sessionfinish`), so CI never passes by skipping.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import anyio
import hypothesis  # noqa: F401 - imported before any test starts threads: CPython 3.11.7 ast is not thread-safe
import pytest

# anyio imports its submodules when a name is first used, and pytest rewrites them (anyio ships a pytest
# plugin), which parses an AST: in a test with a server thread running, CPython 3.11.7's AST state races
# ("AST constructor recursion depth mismatch", seen in test_stdio_transport). Every name resolved now instead.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # deprecated aliases warn when resolved
    for _name in dir(anyio):
        getattr(anyio, _name)

# Reading commands run in their own processes here: a resident reader (controller/cli/resident.py) per
# test store would outlive the test by minutes. The CLI's integration tests turn it on, as users have it,
# each test with readers of its own that end with it (tests/integration/conftest.py).
os.environ["KUBEVEC_CLI_RESIDENT_SECONDS"] = "0"

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "deploy" / "samples"
SAMPLE_CRDS = SAMPLES / "crds.yaml"
KUBEVEC_CRDS = REPO / "charts" / "kubevec" / "files" / "crds"  # the chart's own CRDs (SyncPolicy, kopf peering)
SYNCPOLICY_CRD = KUBEVEC_CRDS / "syncpolicies.kubevec.io.yaml"
CRD_CORPUS = Path(os.environ.get("KUBEVEC_CRD_CORPUS") or REPO.parent / "shared" / "crds")
EMBEDDING_REFERENCE = Path(
    os.environ.get("KUBEVEC_EMBEDDING_REFERENCE")
    or REPO.parent / "shared" / "embedding-reference" / "all-MiniLM-L6-v2.json"
)
CORPUS_SKIP = "the real-CRD corpus is not at"
REFERENCE_SKIP = "the upstream reference vectors are not at"


def corpus() -> Path:
    """The real-CRD corpus, or skip the calling test (with where it was looked for)."""
    if not CRD_CORPUS.is_dir():
        pytest.skip(f"{CORPUS_SKIP} {CRD_CORPUS} (set KUBEVEC_CRD_CORPUS)")
    return CRD_CORPUS


def embedding_reference() -> Path:
    if not EMBEDDING_REFERENCE.is_file():
        pytest.skip(f"{REFERENCE_SKIP} {EMBEDDING_REFERENCE} (set KUBEVEC_EMBEDDING_REFERENCE)")
    return EMBEDDING_REFERENCE


_skipped_for_extras: list[str] = []


@pytest.fixture(scope="session", autouse=True)
def _own_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Saved keyword indexes of the tests' throwaway stores go to a temporary directory, not ~/.cache."""
    os.environ["KUBEVEC_CACHE_DIR"] = str(tmp_path_factory.mktemp("kubevec-cache"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        if CORPUS_SKIP in reason or REFERENCE_SKIP in reason:
            _skipped_for_extras.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    present = [
        p
        for p, there in ((CRD_CORPUS, CRD_CORPUS.is_dir()), (EMBEDDING_REFERENCE, EMBEDDING_REFERENCE.is_file()))
        if there
    ]
    wrongly = [line for line in _skipped_for_extras if any(str(p) in line for p in present)]
    if wrongly:
        print("\nSkipped although the material is present:\n  " + "\n  ".join(wrongly))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
