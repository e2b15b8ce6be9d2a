"""Freed C memory goes back to the system where the C library can do it, and nothing breaks where it cannot."""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Iterator

import pytest

from kubevec.inference.providers.embedders import heap


@pytest.fixture(autouse=True)
def fresh_lookup() -> Iterator[None]:
    heap._malloc_trim.cache_clear()
    yield
    heap._malloc_trim.cache_clear()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is a glibc call")
def test_glibc_gives_freed_memory_back() -> None:
    assert heap.release_freed()


def test_without_a_c_library_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def unloadable(name: object) -> object:
        raise OSError("no such library")

    monkeypatch.setattr(ctypes, "CDLL", unloadable)
    assert not heap.release_freed()


def test_a_c_library_without_malloc_trim_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    class Musl:
        def __getattr__(self, name: str) -> object:
            raise AttributeError(name)

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Musl())
    assert not heap.release_freed()
