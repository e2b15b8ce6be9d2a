"""``list_changes``'s reader: the change history, as far as the caller's view sees the objects.

The view of the instances collection applies to the history unchanged (a record carries the
object's cluster, namespace and resource, the fields views filter on).
"""

from __future__ import annotations

import dataclasses

from kubevec.core.errors import CollectionNotFound, EmbedderError, InvalidFilter, SearchError
from kubevec.inference.change_records import CHANGES
from kubevec.inference.documents import INSTANCES
from kubevec.query.changes import Changes, ChangesRequest, list_changes
from kubevec.query.scope import admit
from kubevec.query.sources import Sources
from kubevec.query.views import View


async def changes(sources: Sources, request: ChangesRequest, view: View | None) -> Changes:
    """The change history's answer to ``request`` (see ``kubevec.query.changes``)."""
    await sources.active.fresh()
    admitted = admit(view, INSTANCES)
    if admitted is None:
        return Changes(entries=[], total=0)
    if CHANGES not in sources.active.names:
        return Changes(entries=[], total=0, degraded="this store keeps no change history")
    name = sources.active.name(CHANGES)
    embedder = sources.active.embedder
    embedded = sources.history_embedded and sources.vectors.up
    store, scope = sources.store, admitted.filter
    try:
        try:
            return await list_changes(
                store=store, collection=name, request=request, scope=scope, embedder=embedder, embedded=embedded
            )
        except EmbedderError as exc:
            sources.vectors.failed()
            answer = await list_changes(
                store=store, collection=name, request=request, scope=scope, embedder=None, embedded=False
            )
            return dataclasses.replace(
                answer, degraded=f"the embedder is unavailable ({exc.reason}): answered from keywords alone"
            )
    except CollectionNotFound:
        return Changes(
            entries=[],
            total=0,
            degraded="no change history yet: the controller records it (KUBEVEC_HISTORY__ENABLED)",
        )
    except InvalidFilter as exc:
        raise SearchError(str(exc)) from exc
