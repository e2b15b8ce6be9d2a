"""What a store accepts, checked before any backend is called: names, indexed fields, ``k``, records.

Every backend gets the same answer for the same bad input (one :class:`InvalidRecord` or
:class:`BackendError` naming what to change), and the hooks in base.py only ever see records that
keep the contract: a non-empty id, a finite vector of the collection's dimension, a ``content_hash``,
metadata of scalars or lists of one scalar type, no reserved key and no empty list.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Final

from kubevec.backends.protocol import CollectionInfo
from kubevec.backends.records import RESERVED_METADATA, MetadataValue, Record
from kubevec.core.errors import BackendError, CollectionMismatch, InvalidRecord

#: The most neighbours one store search returns (a store limit; agents ask for at most ``kubevec.query.request.MAX_K``).
MAX_NEIGHBOURS: Final = 1000


def check_name(name: str) -> None:
    if not isinstance(name, str) or not name:
        raise BackendError(f"Collection name must be a non-empty string, got {name!r}")


def check_field(field: str) -> None:
    if not isinstance(field, str) or not field or field in RESERVED_METADATA:
        raise InvalidRecord(f"Cannot index metadata field {field!r}: not a metadata key")


def check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_NEIGHBOURS:
        raise BackendError(f"k must be an integer from 1 to {MAX_NEIGHBOURS}, got {k!r}")


def check_same(*, name: str, existing: CollectionInfo, wanted: CollectionInfo, location: str) -> None:
    for field in ("dimension", "distance", "embedder"):
        have, want = getattr(existing, field), getattr(wanted, field)
        if have != want:
            raise CollectionMismatch(
                f"Collection {name!r} at {location} was built with {field}={have!r}, "
                f"but this configuration uses {field}={want!r}; use the same {field}, migrate "
                "(`kubevec migrate`, or KUBEVEC_SYNC__MIGRATE=true: new collections, then an atomic switch) "
                "or reindex (`kubevec run --reindex` drops and rebuilds the collections)"
            )


def check_record(record: Record, *, dimension: int) -> None:
    if not isinstance(record.id, str) or not record.id:
        raise InvalidRecord(f"Record id must be a non-empty string, got {record.id!r}")
    if len(record.vector) != dimension:
        raise InvalidRecord(
            f"Record {record.id!r} has a {len(record.vector)}-d vector, the collection is {dimension}-d"
        )
    try:  # one pass in C (a generator over 384 floats was 4% of a 100,000-object sync)
        finite = math.isfinite(math.fsum(record.vector))
    except (TypeError, ValueError):  # a value that is no number, or infinities of both signs
        finite = False
    except OverflowError:  # huge but finite components: look at each
        finite = all(isinstance(x, int | float) and math.isfinite(x) for x in record.vector)
    if not finite:
        raise InvalidRecord(f"Record {record.id!r} has a non-finite vector component")
    if "content_hash" not in record.metadata:
        raise InvalidRecord(f"Record {record.id!r} has no content_hash in its metadata")
    _check_metadata(record.id, record.metadata)


def without_empty_lists(record: Record) -> Record:
    """Empty lists carry nothing to filter on and Chroma refuses them: every backend drops them."""
    if not any(isinstance(v, list) and not v for v in record.metadata.values()):
        return record
    metadata = {k: v for k, v in record.metadata.items() if not (isinstance(v, list) and not v)}
    return dataclasses.replace(record, metadata=metadata)


def _check_metadata(record_id: str, metadata: Mapping[str, MetadataValue]) -> None:
    for key, value in metadata.items():
        if key in RESERVED_METADATA:
            raise InvalidRecord(f"Record {record_id!r} uses the reserved metadata key {key!r}")
        if isinstance(value, list):
            if not value:
                continue
            kinds = {type(item) for item in value}
            if len(kinds) != 1 or not kinds <= {str, int, float, bool}:
                raise InvalidRecord(f"Record {record_id!r}: metadata {key!r} must be a list of one scalar type")
        elif not isinstance(value, str | int | float | bool):
            raise InvalidRecord(f"Record {record_id!r}: metadata {key!r} must be a scalar or a list of scalars")
