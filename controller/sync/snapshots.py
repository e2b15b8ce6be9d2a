"""The stored hashes, saved when the controller stops: a restart reads a file instead of every record.

At start-up the engine needs every stored document's hashes (``SyncEngine.snapshot``). Reading them
from the store means reading every record's metadata: 16.5 s at 100,000 instance documents in
embedded Chroma, most of a restart's budget. The controller is the store's writer, so when it stops
(after its final flush) it knows exactly what the store holds; it saves that beside the write stamps
of the collections (``kubevec.backends.stamps``). The next start uses the file only if every stamp
is still the same: nobody wrote since, whoever they are (another cluster's controller on a shared
store, ``kubevec index``, a migration). Anything else (no file, another store, a stamp that moved, a
file that does not parse) reads the store as before.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from kubevec.backends import StoredHashes
from kubevec.inference.collections import COLLECTIONS, Collection

logger = logging.getLogger(__name__)

FORMAT: Final = 1


def save(
    path: Path,
    *,
    names: Mapping[Collection, str],
    stamps: Mapping[Collection, str | None],
    known: Mapping[Collection, Mapping[str, StoredHashes]],
) -> bool:
    """Write the file (beside, then renamed into place); False, logged, if it could not be written."""
    if any(stamp is None for stamp in stamps.values()):
        return False  # a collection nobody stamped: a later start could not tell whether it changed
    body = {
        "format": FORMAT,
        "names": dict(names),
        "stamps": dict(stamps),
        "known": {collection: [[i, *hashes] for i, hashes in ids.items()] for collection, ids in known.items()},
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".snapshot-", delete=False) as out:
            json.dump(body, out, separators=(",", ":"))
        os.replace(out.name, path)
    except OSError as exc:
        logger.warning("Could not save the stored hashes path=%s error=%s", path, exc)
        return False
    logger.info("Saved the stored hashes path=%s documents=%d", path, sum(len(ids) for ids in known.values()))
    return True


def load(
    path: Path, *, names: Mapping[Collection, str], stamps: Mapping[Collection, str | None]
) -> dict[Collection, dict[str, StoredHashes]] | None:
    """The saved hashes if they describe the store as it is now (the same collections, every stamp unmoved)."""
    try:
        body: Any = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        logger.warning("Ignoring saved stored hashes path=%s error=%s", path, exc)
        return None
    if not isinstance(body, dict) or body.get("format") != FORMAT or body.get("names") != dict(names):
        return None
    if any(stamp is None for stamp in stamps.values()) or body.get("stamps") != dict(stamps):
        return None
    try:
        return {
            collection: {
                str(row[0]): StoredHashes(*(str(part) for part in row[1:])) for row in body["known"][collection]
            }
            for collection in COLLECTIONS
        }
    except (KeyError, TypeError, AttributeError) as exc:
        logger.warning("Ignoring saved stored hashes path=%s error=%s", path, exc)
        return None
