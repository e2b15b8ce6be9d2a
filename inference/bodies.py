"""Kubernetes object bodies as the API server sends them, typed (the model is kopf's ``bodies.py``).

These are views on the JSON, not validated copies: every key may be missing (``total=False``), and
a hostile object may carry anything under any key, so readers still check what they use.
:func:`metadata_of` is the one place that turns "no metadata, or not a mapping" into an empty one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    ownerReferences: list[OwnerReference]
    managedFields: list[Any]


class Body(TypedDict, total=False):
    apiVersion: str
    kind: str
    type: str
    metadata: ObjectMeta
    spec: Mapping[str, Any]
    status: Mapping[str, Any]
    data: Mapping[str, Any]
    stringData: Mapping[str, Any]
    binaryData: Mapping[str, Any]


def as_body(value: Mapping[str, Any]) -> Body:
    """Where JSON enters (API lists, kopf handlers, files): the mapping, typed as a :class:`Body`."""
    return cast(Body, value)


def metadata_of(body: Mapping[str, Any]) -> ObjectMeta:
    """The body's metadata, or an empty one when it is missing or not a mapping."""
    meta = body.get("metadata")
    return cast(ObjectMeta, meta) if isinstance(meta, Mapping) else ObjectMeta()
