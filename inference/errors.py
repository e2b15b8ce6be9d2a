"""The error every builder raises for input it cannot turn into a document (kept apart so the pure
modules below ``documents`` can raise it too)."""

from __future__ import annotations


class InferenceError(ValueError):
    """An object could not be turned into a document; the message names the object.

    ``reason`` is a short word for ``kubevec_documents_skipped_total{reason}``.
    """

    reason: str = "malformed"
