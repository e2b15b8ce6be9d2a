"""The catalogue builder reads a real git history: a retired official image keeps the description its
maintainers wrote before they marked it deprecated (``inference/catalogue/build.py``)."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

from kubevec.inference.catalogue import build


def test_a_retired_image_says_its_last_description_before_it_was_marked_deprecated(tmp_path: Path) -> None:
    git = shutil.which("git")
    assert git is not None
    run = functools.partial(subprocess.run, check=True, capture_output=True, cwd=tmp_path)
    run([git, "init", "-q"])
    run([git, "config", "user.email", "t@example.com"])
    run([git, "config", "user.name", "t"])

    def commit(files: dict[str, str | None]) -> None:
        for path, text in files.items():
            target = tmp_path / path
            if text is None:
                run([git, "rm", "-q", path])
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            run([git, "add", path])
        run([git, "commit", "-qm", "step"])

    commit(
        {"nats-streaming/README-short.txt": "NATS Streaming is a streaming system.", "redis/README-short.txt": "Redis."}
    )
    commit(
        {"nats-streaming/README-short.txt": "DEPRECATED; use JetStream", "crux/README-short.txt": "DEPRECATED; gone"}
    )
    commit({"nats-streaming/README-short.txt": None, "crux/README-short.txt": None})
    retired = build._retired(str(tmp_path / ".git"), named="README-short.txt", present={"redis"})
    assert retired == {"nats-streaming": "NATS Streaming is a streaming system."}  # redis is current, crux says nothing
