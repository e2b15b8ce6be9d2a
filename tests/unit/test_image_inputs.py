"""The image's inputs: the lock pins every runtime dependency with hashes; the Dockerfile keeps its promises.

The image itself is built by `deploy/build-image.sh` (buildah) or `docker build`; these checks keep
a dependency added to pyproject.toml from being forgotten in the lock (the build would then fail
under --require-hashes, far from the change).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "deploy" / "requirements.lock"
DOCKERFILE = (REPO / "deploy" / "Dockerfile").read_text()


def locked() -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes)."""
    pins: dict[str, tuple[str, int]] = {}
    name = ""
    for line in LOCK.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^ \\]+)", line)
        if match:
            name = canonicalize_name(match.group(1))
            pins[name] = (match.group(2), 0)
        elif line.strip().startswith("--hash=sha256:") and name:
            version, count = pins[name]
            pins[name] = (version, count + 1)
    return pins


def test_every_runtime_dependency_is_pinned_with_hashes() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    pins = locked()
    build = [Requirement(r) for r in project["build-system"]["requires"]]
    extras = [Requirement(r) for r in project["project"]["optional-dependencies"]["bedrock"]]  # the image has Bedrock
    for requirement in [Requirement(r) for r in project["project"]["dependencies"]] + extras + build:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in deploy/requirements.lock: run `make lock`"
        version, _ = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} vs {requirement}"
    assert all(hashes > 0 for _, hashes in pins.values())


def test_the_dockerfile_pins_its_base_installs_by_hash_and_runs_as_non_root() -> None:
    base = re.search(r"^ARG BASE_IMAGE=(\S+)$", DOCKERFILE, re.MULTILINE)
    assert base is not None
    assert re.search(r"@sha256:[0-9a-f]{64}$", base.group(1))
    assert "--require-hashes" in DOCKERFILE
    assert "--no-index ." in DOCKERFILE  # kubevec itself resolves nothing
    users = re.findall(r"^USER (\S+)$", DOCKERFILE, re.MULTILINE)
    assert users == ["65532:65532"]  # the chart's runAsUser
    for label in ("title", "version", "revision", "source", "licenses"):
        assert f"org.opencontainers.image.{label}=" in DOCKERFILE
    assert "ANONYMIZED_TELEMETRY=False" in DOCKERFILE
    ignore = (REPO / ".dockerignore").read_text().splitlines()
    assert ignore[ignore.index("*")] == "*"  # deny by default
    copied = set(re.findall(r"^COPY (?!--from)(.+) \S+$", DOCKERFILE, re.MULTILINE))
    for sources in copied:
        for source in sources.split():
            assert f"!{source}" in ignore or f"!{source}/" in ignore, f"{source} is copied but .dockerignore drops it"


def test_the_image_copies_every_folder_the_wheel_is_built_from() -> None:
    """A new top-level package the Dockerfile does not copy would fail the image's build, not a test."""
    import tomllib

    folders = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values()
    assert {f"COPY {folder} {folder}" for folder in folders} <= set(DOCKERFILE.splitlines())
