"""The caller's scope: what one caller may read of a collection, decided once for every reader.

Every reader asks :func:`admit` before it reads: a collection the caller may not see, or a cluster
outside the clusters it is limited to, holds nothing for it (an empty answer, never an error: a
hidden object is indistinguishable from one that does not exist); otherwise the caller's filter is
ANDed into the reader's own. Capability records can be shared by clusters, so a caller limited to
some clusters reads such a record through :func:`within_clusters`, which keeps only their parts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubevec.backends.filters import Filter
from kubevec.inference.documents import CAPABILITIES
from kubevec.inference.fleet import within

if TYPE_CHECKING:
    from kubevec.query.views import View


def scope_clusters(view: View | None, collection: str) -> frozenset[str] | None:
    """The clusters a caller is limited to, where records can be shared by clusters (capabilities); else None."""
    return view.clusters if view is not None and collection == CAPABILITIES else None


def within_clusters(metadata: Mapping[str, Any], clusters: frozenset[str] | None) -> dict[str, Any] | None:
    """``metadata`` as a caller limited to ``clusters`` sees it (None: not at all); every cluster: as stored."""
    return dict(metadata) if clusters is None else within(metadata, clusters=clusters)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Admitted:
    """What a caller admitted to a collection reads: the reader's conditions AND its view, and its clusters."""

    filter: Filter | None
    #: The clusters whose parts of a shared record it sees (None: every cluster's).
    clusters: frozenset[str] | None


def admit(
    view: View | None, collection: str, *, cluster: str | None = None, conditions: Filter | None = None
) -> Admitted | None:
    """The one view gate: None when the caller may read nothing here (the collection is hidden from it, or
    ``cluster`` is outside the clusters it is limited to); else what it reads through (see :class:`Admitted`)."""
    if view is not None and not view.sees(collection):
        return None
    clusters = scope_clusters(view, collection)
    if clusters is not None and cluster is not None and cluster not in clusters:
        return None
    return Admitted(filter=view.restrict(collection, conditions) if view else conditions, clusters=clusters)
