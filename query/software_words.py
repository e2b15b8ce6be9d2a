"""What a question says software is or does, met with what a candidate's software is.

"the in-memory cache" is Redis (its catalogue line says caching), "the trace thing" is Jaeger, "the
geo database" may be ``mongodb-geo``: a question says what software is in words, and the catalogue
(:mod:`kubevec.inference.software`) says it of each well-known image. Read by :mod:`kubevec.query.intent`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubevec.core import fields
from kubevec.inference.instances.workloads import NAME_LABELS
from kubevec.inference.software import described
from kubevec.query.spelling import common_stems, line_names, line_stems, software_line, software_names
from kubevec.query.stems import stems


def what_software_does(words: Iterable[str], *, says: frozenset[str]) -> frozenset[str]:
    """Of the stems ``says`` (what the question may say software is), those few catalogue lines share, from
    ``words`` that name no software themselves (the catalogue says MariaDB is "forked from MySQL")."""
    said = stems(" ".join(w for w in words if w not in software_names()))
    return (said & says) - common_stems()


def describes(metadata: Mapping[str, Any], *, does: frozenset[str]) -> bool:
    """What the question says software does (``does``, :func:`what_software_does`) meets the candidate's
    ``software:`` line (its images', else its name's), as its document says it."""
    images = fields.IMAGES.of(metadata)[:8]
    if not does or not images:
        return False
    labels = (pair.partition("=") for pair in fields.LABELS.of(metadata))
    names = [fields.NAME.of(metadata), *(value for key, _, value in labels if key in NAME_LABELS)]
    return any(not does.isdisjoint(line_stems(line)) for line in described(images, names=names))


def software_said(images: list[str], *, says: frozenset[str]) -> frozenset[str]:
    """The names of the software among ``images`` that the question says something of: its name
    (``mongo``, also as ``mongodb``) when the question's stems (``says``) meet its catalogue line or its name."""
    found: set[str] = set()
    for image in images[:8]:
        name, line = software_line(image)
        if name and not says.isdisjoint(line):
            found.update(line_names(name, line))
    return frozenset(found)
