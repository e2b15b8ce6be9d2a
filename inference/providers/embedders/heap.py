"""Give memory that C code freed back to the operating system (glibc's ``malloc_trim``).

onnxruntime allocates and frees hundreds of MiB per batch of texts outside its arena (graph
optimisation at load time, kernels' scratch space), and glibc keeps most of what was freed in its
heaps: measured, a process that had 225 MiB live showed 380 MiB resident after a few batches.
``malloc_trim(0)`` returns the free pages of every heap. It runs after model loading and after
each batch of documents (the embedder bench's texts/s did not move with it), never on the query
path, where a single text frees little.

Other C libraries (musl in Alpine images, macOS) have no such call; there it does nothing.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim``, looked up among the symbols the process has loaded.

    Not by ``ctypes.util.find_library("c")``: on Linux that runs ``ldconfig -p`` (a process, ~10 ms)
    to find a library the interpreter has loaded already.
    """
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def release_freed() -> bool:
    """Return freed heap pages to the system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
