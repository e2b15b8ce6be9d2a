"""Reading Kubernetes manifests from YAML: multi-document files, folders, and YAML 1.1 oddities.

PyYAML's safe loader refuses the YAML 1.1 ``=`` (value) tag that a plain ``=`` scalar resolves to
(prometheus-operator's AlertmanagerConfig has ``enum: [..., =, ...]``); here it reads as the string.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from kubevec.core.errors import InferenceError

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestLoader(_Base):  # type: ignore[misc]
    """Safe loader that reads the ``=`` value tag as a plain string."""


def _construct_value(loader: Any, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))


ManifestLoader.add_constructor("tag:yaml.org,2002:value", _construct_value)


def load_manifests(text: str, *, source: str = "<string>") -> list[Mapping[str, Any]]:
    """Every non-empty YAML document in ``text`` (``List`` kinds are expanded)."""
    try:
        documents = list(yaml.load_all(text, Loader=ManifestLoader))
    except yaml.YAMLError as exc:
        raise InferenceError(f"{source} is not valid YAML: {exc}") from exc
    out: list[Mapping[str, Any]] = []
    for index, document in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise InferenceError(f"{source}: document {index + 1} is a {type(document).__name__}, not a mapping")
        if str(document.get("kind", "")).endswith("List") and isinstance(document.get("items"), list):
            out.extend(item for item in document["items"] if isinstance(item, Mapping))
        else:
            out.append(document)
    return out


def iter_manifest_files(paths: list[Path]) -> Iterator[Path]:
    """YAML files named directly, and every ``*.yaml``/``*.yml`` below named folders, sorted."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        elif path.exists():
            yield path
        else:
            raise InferenceError(f"{path} does not exist")


def is_crd(document: Mapping[str, Any]) -> bool:
    return document.get("kind") == "CustomResourceDefinition" and str(document.get("apiVersion", "")).startswith(
        "apiextensions.k8s.io/"
    )
