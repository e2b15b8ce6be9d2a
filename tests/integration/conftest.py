"""Real services for integration tests: a `chroma run` server on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.services import chroma_server as run_chroma_server


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_chroma_server(tmp_path_factory.mktemp("chroma-server")) as url:
        yield url
