"""A long-lived reader of an embedded store sees what another process writes to it (``follow=True``).

``kubevec mcp`` (or the resident CLI) reads the directory ``kubevec run`` writes. Without following,
chromadb's embedded client kept serving its in-memory HNSW index (a deleted record was still found,
a new one never) and a Lance table stayed at the version it opened: found by running ``kubevec mcp``
beside a controller. It follows the write stamps (backends/stamps.py): what another process wrote
before a call began is in that call's answer, and without a writer it never reopens (the earlier
check of file times reopened on nearly every call: opening a client touches ``chroma.sqlite3``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kubevec.backends.config import StoreSettings
from kubevec.backends.factory import open_store
from kubevec.core.errors import BackendUnavailable

pytestmark = pytest.mark.integration

BACKENDS = ["chroma", "lancedb"]
UPSERT_A = (
    'await store.upsert("instances", [Record(id="a", vector=[1.0, 0.0], text="a", metadata={"content_hash": "h"})])'
)


def write(backend: str, path: Path, script: str) -> None:
    """Run ``script`` with ``store`` open on ``path``, in a process of its own (as the controller is)."""
    program = textwrap.dedent(
        f"""
        import asyncio
        from kubevec.backends import Record
        from kubevec.backends.config import StoreSettings
        from kubevec.backends.factory import open_store

        async def main():
            store = open_store(StoreSettings(backend={backend!r}, path={str(path)!r}))
            await store.ensure_collection("instances", dimension=2, embedder="e")
        """
    )
    program += (
        textwrap.indent(textwrap.dedent(script).strip() + "\n", "    ")
        + "    await store.close()\n\nasyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True, timeout=120)


async def found(store: object, vector: list[float]) -> list[str]:
    hits = await store.search("instances", vector=vector, k=5)  # type: ignore[attr-defined]
    return [hit.id for hit in hits]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_following_reader_sees_another_process_write_and_delete(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "store"
    write(backend, path, UPSERT_A)
    reader = open_store(StoreSettings(backend=backend, path=path), follow=True)  # type: ignore[arg-type]
    try:
        assert await found(reader, [0.0, 1.0]) == ["a"]
        write(
            backend,
            path,
            """
            await store.upsert("instances", [Record(id="b", vector=[0.0, 1.0], text="b", metadata={"content_hash": "h"})])
            await store.delete("instances", ["a"])
            """,
        )
        assert await found(reader, [0.0, 1.0]) == ["b"]  # at once: no polling interval to wait out
        assert await reader.get("instances", ["a", "b"]) == await reader.get("instances", ["b"])
    finally:
        await reader.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_following_reader_reopens_only_when_another_process_wrote(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "store"
    write(backend, path, UPSERT_A)
    reader = open_store(StoreSettings(backend=backend, path=path), follow=True)  # type: ignore[arg-type]
    reopened = 0
    reopen = reader._reopen  # type: ignore[attr-defined]

    def counted() -> None:
        nonlocal reopened
        reopened += 1
        reopen()

    reader._reopen = counted  # type: ignore[attr-defined]
    try:
        for _ in range(50):
            assert await found(reader, [1.0, 0.0]) == ["a"]
            await reader.count("instances")
        assert reopened == 0
        write(  # another collection (the controller's status record, its history): nothing to reopen for
            backend,
            path,
            """
            await store.ensure_collection("status", dimension=1, embedder="none")
            await store.upsert("status", [Record(id="s", vector=[1.0], text="s", metadata={"content_hash": "1"})])
            """,
        )
        assert await found(reader, [1.0, 0.0]) == ["a"]
        assert reopened == 0
        write(backend, path, 'await store.delete("instances", ["a"])')
        assert await found(reader, [1.0, 0.0]) == []
        for _ in range(10):
            await found(reader, [1.0, 0.0])
        assert reopened == 1
    finally:
        await reader.close()


async def test_a_reader_that_does_not_follow_is_not_reopened(tmp_path: Path) -> None:
    """The controller's own store (one writer, no follower) never pays for a reopen."""
    path = tmp_path / "store"
    write("chroma", path, UPSERT_A)
    store = open_store(StoreSettings(backend="chroma", path=path))
    try:
        assert await found(store, [0.0, 1.0]) == ["a"]
        client = store._client  # type: ignore[attr-defined]
        write("chroma", path, 'await store.delete("instances", ["a"])')
        await found(store, [0.0, 1.0])
        assert store._client is client  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_a_following_reader_never_recreates_a_store_that_was_deleted(tmp_path: Path) -> None:
    path = tmp_path / "store"
    write("chroma", path, UPSERT_A)
    reader = open_store(StoreSettings(backend="chroma", path=path), follow=True)
    try:
        assert await found(reader, [1.0, 0.0]) == ["a"]
        shutil.rmtree(path)
        for _ in range(2):  # the second call too: nothing in between opened a new, empty store
            with pytest.raises(BackendUnavailable, match="is gone"):
                await found(reader, [1.0, 0.0])
        assert not path.exists()
    finally:
        await reader.close()
