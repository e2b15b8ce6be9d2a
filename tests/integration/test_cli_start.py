"""A cheap start: ``kubevec --help``, ``completion`` and the resident reader's client import little.

A shell that sources the completion script, or an agent that runs ``kubevec --help`` to learn the
commands, should not pay for the settings (pydantic-settings), an HTTP client or the gate's rules
(issue 50: ``kubevec --help`` took 20x a bare interpreter). Checked by what a fresh interpreter has
imported when the command ends.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

#: Modules none of these paths may import.
HEAVY = (
    "pydantic_settings",
    "kubevec.controller.settings",
    "httpx",
    "kubevec.inference.redaction",
    "chromadb",
    "onnxruntime",
    "kopf",
)
PROBE = """
import contextlib, io, json, sys
from kubevec.controller.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def imported(*argv: str) -> tuple[object, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(done.stdout.splitlines()[-1])
    return found["code"], set(found["modules"])


@pytest.mark.parametrize(
    "argv", [("--help",), ("search", "--help"), ("completion", "bash"), ("completion", "zsh"), ("--version",)]
)
def test_help_and_completion_import_nothing_heavy(argv: tuple[str, ...]) -> None:
    code, modules = imported(*argv)
    assert code == 0
    assert sorted(m for m in modules if m.startswith(HEAVY)) == []


def test_listing_the_commands_imports_no_request_model() -> None:
    """``kubevec --help`` builds no tool's flags: their requests are pydantic models (its costliest import
    before: 0.26 s CPU with them, 0.11 s without, on a loaded 2-core machine)."""
    code, modules = imported("--help")
    assert code == 0
    assert (
        sorted(m for m in modules if m.startswith(("pydantic", "kubevec.query.tools", "kubevec.query.request"))) == []
    )


def test_the_resident_client_path_imports_only_the_standard_library_and_the_error_tree() -> None:
    """What ``kubevec search`` imports before a warm reader answers it: every warm call pays it."""
    probe = "import json, sys; import kubevec.controller.cli.main; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    modules = set(json.loads(done.stdout))
    assert sorted(m for m in modules if m.startswith("kubevec")) == [
        "kubevec",
        "kubevec.controller",
        "kubevec.controller.cli",
        "kubevec.controller.cli.main",
        "kubevec.controller.cli.resident",
        "kubevec.core",
        "kubevec.core.errors",
    ]
    assert not any(m.startswith(("pydantic", "httpx", "asyncio")) for m in modules)
