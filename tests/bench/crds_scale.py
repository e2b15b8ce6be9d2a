"""The capability side at Crossplane size: ``kubevec index crds`` over 2,000 CRDs, time and memory.

A cluster with a few Crossplane providers serves 2,000 CRDs and more; the test API server alone
needs ~7 MB per CRD, so this runs the command line a user runs without a cluster: the real corpus
(``KUBEVEC_CRD_CORPUS``) copied under new group names until there are ``KUBEVEC_BENCH_INDEX_CRDS``
(default 2,000), written as YAML files, indexed into an embedded store with the offline model; then
indexed again unchanged (no file parsed, nothing embedded), again with one file changed (that file
alone parsed), and searched once. CPU seconds and peak RSS are the command's own (GNU time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bench.report import table
from tests.bench.scale import corpus_crds, scaled_crd

COUNT = int(os.environ.get("KUBEVEC_BENCH_INDEX_CRDS", "2000"))
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS MiB, last line it printed) of one command in its own process."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as measured:
        done = subprocess.run(
            ["/usr/bin/time", "-o", measured.name, "-f", "%e %U %S %M", *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        figures = measured.read().split()
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} failed: {done.stderr.strip()[-500:]}")
    wall, user, system, peak_kib = (float(x) for x in figures[-4:])
    lines = (done.stdout.strip() or done.stderr.strip()).splitlines()  # its result line, else its last word
    return wall, user + system, peak_kib / 1024, lines[-1] if lines else ""


def run() -> str:
    with tempfile.TemporaryDirectory(prefix="kubevec-crds-") as tmp:
        folder = Path(tmp) / "crds"
        folder.mkdir()
        base = corpus_crds()
        size = 0
        for index in range(COUNT):  # one at a time, one file each, JSON (YAML's flow style): fast to write
            text = json.dumps(scaled_crd(base, index))
            (folder / f"crd-{index:05d}.yaml").write_text(text)
            size += len(text)
        env = {
            **os.environ,
            "KUBEVEC_STORE__PATH": str(Path(tmp) / "store"),
            "KUBEVEC_CACHE_DIR": str(Path(tmp) / "cache"),
            "KUBEVEC_CLI_RESIDENT_SECONDS": "0",
        }
        print(f"  indexing {COUNT} CRDs ({size / 1e6:.0f} MB of YAML) ...", file=sys.stderr, flush=True)
        first = timed([KUBEVEC, "index", "crds", str(folder)], env)
        print("  indexing them again, unchanged ...", file=sys.stderr, flush=True)
        again = timed([KUBEVEC, "index", "crds", str(folder)], env)
        print("  and with one file changed ...", file=sys.stderr, flush=True)
        edited = scaled_crd(base, 0)
        for version in edited["spec"]["versions"]:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if isinstance(schema, dict):
                schema["description"] = "Edited by the bench: one changed file among the unchanged."
        (folder / "crd-00000.yaml").write_text(json.dumps(edited))
        one = timed([KUBEVEC, "index", "crds", str(folder)], env)
        search = timed([KUBEVEC, "search", "managed PostgreSQL with backups", "-k", "5", "-o", "name"], env)
    rows = [
        ["index crds, first (embeds every document)", first[0], first[1], first[2], first[3][:90]],
        ["index crds again, unchanged", again[0], again[1], again[2], again[3][:90]],
        ["index crds again, one file changed", one[0], one[1], one[2], one[3][:90]],
        ["search, one-shot process", search[0], search[1], search[2], ""],
    ]
    return table([f"{COUNT} CRDs", "wall s", "CPU s", "peak RSS MiB", "said"], rows) + (
        "\n(kubevec index crds over YAML files, embedded Chroma, offline model; KUBEVEC_BENCH_INDEX_CRDS scales it.)"
    )


if __name__ == "__main__":
    print(run())
