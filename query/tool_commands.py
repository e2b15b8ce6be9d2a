"""Each tool's CLI command and its one line in ``kubevec --help``, apart from the tool table.

The tool table (``tools.py``) imports every tool's declared request, pydantic models that cost more
to import than the rest of ``kubevec --help``; listing the commands needs only their names and help
lines, so they live here and the table takes them from here (a test checks both name the same tools).
"""

from __future__ import annotations

from typing import Final

#: command -> its help line, in the order ``kubevec --help`` lists them.
COMMANDS: Final = {
    "search": "search the capabilities or instances collection",
    "get": "print one stored document (text and metadata) by its id",
    "resolve": "a kind's group, apiVersion, versions, scope and top fields",
    "related": "what an object references and what references it (from the index)",
    "facets": "distinct values of a metadata field with their counts",
    "changes": "what changed, newest first (the change history the controller records)",
}
