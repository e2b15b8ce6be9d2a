"""An embedded store's directory removed, or recreated in its place, is told from the one opened."""

from __future__ import annotations

import shutil
from pathlib import Path

from kubevec.controller.runtime.health import StoreDirectory


def opened(path: Path, *, clock: list[float] | None = None) -> StoreDirectory:
    path.mkdir()
    (path / "data").write_text("x")
    times = clock if clock is not None else [0.0]
    directory = StoreDirectory(path, bound=3, clock=lambda: times[0])
    directory.remember()
    return directory


def test_the_opened_directory_in_place_is_fine(tmp_path: Path) -> None:
    directory = opened(tmp_path / "store")
    assert directory.check() is None
    assert directory.error is None
    assert directory.not_live() is None


def test_a_removed_directory_is_gone(tmp_path: Path) -> None:
    directory = opened(tmp_path / "store")
    shutil.rmtree(tmp_path / "store")
    assert "is gone" in (directory.check() or "")


def test_a_directory_recreated_in_place_is_gone_even_with_the_freed_inode_number(tmp_path: Path) -> None:
    """ext4 gives a directory made at once the inode number just freed; LanceDB remakes its directory on a write."""
    directory = opened(tmp_path / "store")
    shutil.rmtree(tmp_path / "store")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "data").write_text("x")
    assert "is gone" in (directory.check() or "")


def test_a_directory_moved_aside_and_replaced_is_not_the_one_opened(tmp_path: Path) -> None:
    directory = opened(tmp_path / "store")
    (tmp_path / "store").rename(tmp_path / "aside")
    (tmp_path / "store").mkdir()
    assert "was replaced" in (directory.check() or "")


def test_liveness_fails_only_after_the_bound(tmp_path: Path) -> None:
    clock = [100.0]
    directory = opened(tmp_path / "store", clock=clock)
    shutil.rmtree(tmp_path / "store")
    directory.check()
    clock[0] = 102.0
    assert directory.not_live() is None
    clock[0] = 103.5
    assert "for more than 3s" in (directory.not_live() or "")
    directory.close()
