"""`kubevec index crds` run again: what did not change is neither parsed, described nor embedded.

Each stored capability part says which file (its sha256 and how many CRDs it holds) and which
builder it was built from; a file whose CRDs the store holds exactly so is skipped unread. What
is missing, stale or built by another builder is built again: nothing is lost to the shortcut.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from kubevec.backends.memory import MemoryStore
from kubevec.controller.sync import crd_files
from kubevec.controller.sync.crd_files import IndexReport, index_crds
from kubevec.inference import capabilities, manifests
from kubevec.inference.fleet import parts_of, resource_of
from kubevec.inference.manifests import is_crd, load_manifests
from tests.conftest import SAMPLE_CRDS
from tests.doubles.embedders import CountingEmbedder

COLLECTION = "capabilities"


class Calls:
    """How many files were parsed and CRDs described (whichever module calls them)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parsed = 0
        self.described = 0
        parse, describe = manifests.load_manifests, capabilities.describe_crd

        def counted_parse(text: str, *, source: str = "<string>") -> list[Mapping[str, Any]]:
            self.parsed += 1
            return parse(text, source=source)

        def counted_describe(crd: Mapping[str, Any], **kwargs: Any) -> Any:
            self.described += 1
            return describe(crd, **kwargs)

        for module in (manifests, capabilities):
            monkeypatch.setattr(module, "load_manifests", counted_parse)
        monkeypatch.setattr(capabilities, "describe_crd", counted_describe)

    def reset(self) -> None:
        self.parsed = self.described = 0


def split_samples(folder: Path) -> dict[str, Path]:
    """The 7 sample CRDs as three files (3, 2 and 2 CRDs): CRD name -> its file."""
    crds = [m for m in load_manifests(SAMPLE_CRDS.read_text()) if is_crd(m)]
    assert len(crds) == 7
    folder.mkdir()
    where: dict[str, Path] = {}
    for index, group in enumerate((crds[:3], crds[3:5], crds[5:])):
        path = folder / f"crds-{index}.yaml"
        path.write_text("\n---\n".join(json.dumps(crd) for crd in group))
        where.update({crd["metadata"]["name"]: path for crd in group})
    return where


async def stored(store: MemoryStore) -> dict[str, str]:
    """resource -> the built_from of its part, as stored."""
    out: dict[str, str] = {}
    async for record in store.iter_records(COLLECTION, page_size=100):
        for part in parts_of(record.metadata):
            out[resource_of(record.id)] = part.built_from
    return out


@pytest.fixture
def run(tmp_path: Path) -> Callable[[], Any]:
    store, embedder = MemoryStore(), CountingEmbedder()

    async def index() -> tuple[IndexReport, int]:
        before = len(embedder.texts)
        report = await index_crds(
            paths=[tmp_path / "crds"],
            store=store,
            embedder=embedder,
            collection=COLLECTION,
            cluster="c1",
            progress=None,
        )
        return report, len(embedder.texts) - before

    index.store = store  # type: ignore[attr-defined]
    return index


async def test_unchanged_rerun_parses_describes_and_embeds_nothing(
    tmp_path: Path, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    split_samples(tmp_path / "crds")
    calls = Calls(monkeypatch)
    first, embedded = await run()
    assert (first.files, first.documents, embedded, first.errors) == (3, 7, 7, [])
    assert (calls.parsed, calls.described) == (3, 7)
    calls.reset()
    again, embedded = await run()
    assert (calls.parsed, calls.described, embedded) == (0, 0, 0)
    assert (again.files, again.parsed, again.documents, again.unchanged, again.embedded) == (3, 0, 7, 7, 0)
    assert len(await stored(run.store)) == 7


async def test_one_changed_file_alone_is_rebuilt(tmp_path: Path, run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    where = split_samples(tmp_path / "crds")
    await run()
    before = await stored(run.store)
    changed = where["backupschedules.backup.samples.kubevec.io"]
    changed.write_text(changed.read_text().replace("BackupSchedule", "BackupPlan", 1))  # its description
    calls = Calls(monkeypatch)
    report, _ = await run()
    in_file = [name for name, path in where.items() if path == changed]
    assert (calls.parsed, calls.described, report.parsed) == (1, len(in_file), 1)
    after = await stored(run.store)
    assert {name for name in after if after[name] != before[name]} == set(in_file)  # they say the new file
    calls.reset()
    assert (await run())[1] == 0
    assert calls.parsed == 0


async def test_a_record_deleted_behind_its_back_is_rebuilt(
    tmp_path: Path, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = split_samples(tmp_path / "crds")
    await run()
    lost = "certificates.pki.samples.kubevec.io"
    ids = [i async for i, _ in run.store.iter_ids(COLLECTION) if resource_of(i) == lost]
    await run.store.delete(COLLECTION, ids)
    calls = Calls(monkeypatch)
    report, embedded = await run()
    assert calls.parsed == 1
    assert embedded == 1
    assert (report.documents, report.unchanged) == (7, 6)
    assert set(await stored(run.store)) == set(where)


async def test_a_new_builder_rebuilds_everything_once(
    tmp_path: Path, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    split_samples(tmp_path / "crds")
    await run()
    monkeypatch.setattr(crd_files, "builder_version", lambda: "1/next/0123456789ab")
    calls = Calls(monkeypatch)
    report, embedded = await run()
    assert (calls.parsed, calls.described, report.parsed) == (3, 7, 3)
    assert embedded == 0  # the same texts: their vectors are kept
    assert all(built.endswith("/1/next/0123456789ab") for built in (await stored(run.store)).values())
    calls.reset()
    await run()
    assert calls.parsed == 0


async def test_a_removed_file_leaves_its_records(tmp_path: Path, run: Any) -> None:
    """As before: ``index crds`` adds and updates, it never deletes what a folder no longer holds."""
    where = split_samples(tmp_path / "crds")
    await run()
    where["certificates.pki.samples.kubevec.io"].unlink()
    report, _ = await run()
    assert (report.files, report.parsed) == (2, 0)
    assert set(await stored(run.store)) == set(where)


async def test_a_file_with_a_bad_crd_is_read_every_time(
    tmp_path: Path, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its error is reported on every run; its good CRDs are stored and never embedded twice."""
    where = split_samples(tmp_path / "crds")
    bad = where["certificates.pki.samples.kubevec.io"]
    broken = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"}}
    bad.write_text(bad.read_text() + "\n---\n" + json.dumps(broken))
    first, _ = await run()
    assert len(first.errors) == 1
    calls = Calls(monkeypatch)
    again, embedded = await run()
    assert (len(again.errors), calls.parsed, embedded, again.documents) == (1, 1, 0, 7)


async def test_the_same_crd_in_two_files_settles(tmp_path: Path, run: Any) -> None:
    """The later file wins, on every run: no record flips between the two."""
    where = split_samples(tmp_path / "crds")
    name = "certificates.pki.samples.kubevec.io"
    crd = next(m for m in load_manifests(where[name].read_text()) if m["metadata"]["name"] == name)
    copy = json.loads(json.dumps(crd))
    copy["spec"]["names"]["shortNames"] = ["zz"]
    (tmp_path / "crds" / "zz.yaml").write_text(json.dumps(copy))
    await run()
    settled = await stored(run.store)
    for _ in range(2):
        _, embedded = await run()
        assert await stored(run.store) == settled
        assert embedded == 0
