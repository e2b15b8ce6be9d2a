"""Each tool's declared request (``vector_search``'s is ``kubevec.query.request.SearchRequest``,
``list_changes``' ``kubevec.query.changes.ChangesRequest``): its fields are the MCP tool's parameters
and the command's flags (a :class:`~kubevec.query.flags.Flag` where the command words one its own way).

Apart from the table (``kubevec.query.tools``), so the readers that answer them can name them.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from kubevec.inference.collections import Collection
from kubevec.query.flags import Flag
from kubevec.query.request import SearchRequest

#: The description of every tool's ``cluster`` parameter.
CLUSTER: Final = SearchRequest.model_fields["cluster"].description


class ToolRequest(BaseModel):
    """A declared request: immutable, and no field it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class DocumentRequest(ToolRequest):
    id: Annotated[
        str,
        Field(description="The document id."),
        Flag(help="a document id, as search prints it (a capability also by plural.group)", positional=True),
    ]
    cluster: Annotated[
        str | None,
        Field(description=CLUSTER),
        Flag(help="as this cluster serves it (capabilities several clusters share)"),
    ] = None
    collection: Annotated[
        Collection | None,
        Field(description="capabilities or instances; by default taken from the id's shape"),
        Flag(help="where to look (default: both, instances first)"),
    ] = None


class KindRequest(ToolRequest):
    name: Annotated[
        str,
        Field(description="e.g. Certificate, certificates, cert, certificates.cert-manager.io"),
        Flag(help="kind, plural, short name, plural.group, or a phrase", positional=True),
    ]
    cluster: Annotated[
        str | None,
        Field(description=CLUSTER),
        Flag(help="only this cluster's answer, with its apiVersion (default: every cluster's)"),
    ] = None
    limit: Annotated[int, Field(ge=1, description="At most this many types."), Flag(hidden=True)] = 5


class RelatedRequest(ToolRequest):
    id: Annotated[
        str,
        Field(description="An instance id from vector_search, or Kind/namespace/name (Kind/_cluster/name)."),
        Flag(help="an instance id as search prints it, or Kind/namespace/name (Kind/_cluster/name)", positional=True),
    ]
    hops: Annotated[
        int,
        Field(ge=1, le=3, description="1 (default) to 3; later hops keep the direction."),
        Flag(help="1 (default) to 3; later hops keep the direction"),
    ] = 1
    direction: Annotated[
        Literal["out", "in", "both"],
        Field(description="out: what it uses; in: what uses it; both (default)."),
        Flag(help="out: what it uses; in: what uses it (what breaks if it goes); both (default)"),
    ] = "both"
    cluster: Annotated[
        str | None, Field(description=CLUSTER), Flag(help="the cluster_name the object belongs to (default: any)")
    ] = None


class FacetsRequest(ToolRequest):
    field: Annotated[
        str,
        Field(description="The metadata field, e.g. kind or namespace."),
        Flag(help="kind, group, namespace, labels, scope, capabilities, providers ...", positional=True),
    ] = "kind"
    collection: Annotated[
        Collection,
        Field(description=SearchRequest.model_fields["collection"].description),
        Flag(help="which collection"),
    ] = "instances"
    limit: Annotated[
        int, Field(ge=1, description="Most frequent values."), Flag(help="most frequent values to print (default 100)")
    ] = 100
    cluster: Annotated[str | None, Field(description=CLUSTER), Flag(help="only this cluster's documents")] = None
