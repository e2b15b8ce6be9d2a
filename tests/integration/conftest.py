"""Real services for integration tests: a `chroma run` server on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.resident import runtime_dir
from tests.services import chroma_server as run_chroma_server

#: Modules whose commands run with the resident reader on, as users run them (the suite turns it off
#: elsewhere: tests/conftest.py). Each test gets a runtime directory of its own, its readers stopped at its end.
WITH_RESIDENT_READER = ("test_cli_", "test_cross_backend")


@pytest.fixture(autouse=True)
def _resident_reader_as_users_have_it(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    if not request.module.__name__.rsplit(".", 1)[-1].startswith(WITH_RESIDENT_READER):
        yield
        return
    with runtime_dir() as runtime:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        monkeypatch.setenv("KUBEVEC_CLI_RESIDENT_SECONDS", "120")
        yield


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_chroma_server(tmp_path_factory.mktemp("chroma-server")) as url:
        yield url
