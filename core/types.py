"""The value types of a document's metadata: what the builders write and every store keeps.

Defined once here because both ``inference`` (which builds documents) and ``backends`` (which store
them) speak of them, and neither may import the other.
"""

from __future__ import annotations

from collections.abc import Mapping

Scalar = str | int | float | bool
MetadataValue = Scalar | list[str] | list[int] | list[float] | list[bool]
Metadata = Mapping[str, MetadataValue]
