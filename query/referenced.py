"""Secrets known by what refers to them: answers to "which Secret holds the database password" when
kubevec reads no Secret.

By default the controller reads no Secret at all (no RBAC on them; a SyncPolicy opts their metadata
in), so the store holds none, yet agents ask for them: "which Secret holds the credentials for the
catalog database", "catalog db pw", "what kind of object is orders-db". The workloads that use a
Secret say so in their own documents (``env MYSQL_PASSWORD from Secret catalog-db key password``,
their ``refs``), already gated and already in the caller's view. So a question that names the Secret
kind, or a Secret by name, gets that Secret as an answer of its own, put together at query time from
what refers to it: its name, namespace and the key names its users read, never more than those
documents show. It is marked (``referenced_only``), its id is its key (``Secret/shop/catalog-db``, which
``related`` takes), and nothing is stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from kubevec.backends import Hit
from kubevec.core import fields

KIND: Final = "Secret"
#: Metadata key a result put together from references carries (its value: what refers to it).
REFERENCED_ONLY: Final = "referenced_only"
#: The most referrers one such answer lists.
MAX_USERS: Final = 8


def referenced(
    scored: Iterable[tuple[Hit, float]], *, wanted: Callable[[str], bool], kind_asked: bool
) -> dict[str, tuple[Hit, float]]:
    """The Secrets the candidates in ``scored`` refer to that the question asks for (its kind asked, or
    ``wanted(name)``: the question names it), keyed ``Secret/namespace/name``, each with the best score
    of what refers to it (an answer is as relevant as its best user)."""
    users: dict[str, list[tuple[Hit, float]]] = {}
    for hit, score in scored:
        if fields.KIND.of(hit.metadata) == KIND:
            continue
        for ref in fields.REFS.of(hit.metadata)[:64]:
            kind, _, rest = ref.partition("/")
            _, _, name = rest.partition("/")
            if kind == KIND and name and (kind_asked or wanted(name.lower())):
                users.setdefault(ref, []).append((hit, score))
    return {ref: _answer(ref, found) for ref, found in users.items()}


def _answer(ref: str, users: list[tuple[Hit, float]]) -> tuple[Hit, float]:
    _, namespace, name = ref.split("/", 2)
    best = max(score for _, score in users)
    # a workload's Pods and ReplicaSets say what it says: list the workloads (or, without them, whoever there is)
    heads = [pair for pair in users if not fields.OWNER.of(pair[0].metadata)] or users
    users = sorted(heads, key=lambda pair: (-pair[1], pair[0].id))[:MAX_USERS]
    cluster = fields.CLUSTER.of(users[0][0].metadata)
    said = []
    for hit, _ in users:
        keys = sorted(set(re.findall(rf"\bfrom Secret {re.escape(name)} key ([A-Za-z0-9._-]+)", hit.text)))
        user = f"{fields.KIND.of(hit.metadata)} {fields.NAME.of(hit.metadata)}"
        said.append(f"{user} (keys {', '.join(keys)})" if keys else user)
    text = (
        f"{KIND} {name} | namespace: {namespace} | not read (kubevec reads no Secret unless a SyncPolicy opts "
        f"them in): known by what refers to it | used by: {'; '.join(said)}"
    )
    metadata: dict[str, Any] = {
        fields.KIND.name: KIND,
        fields.NAME.name: name,
        fields.NAMESPACE.name: namespace,
        fields.API_VERSION.name: "v1",
        fields.GROUP.name: "core",
        fields.VERSION.name: "v1",
        fields.RESOURCE.name: "secrets",  # a caller's view reads it as a Secret: one who may not read Secrets does not see it
        REFERENCED_ONLY: ", ".join(f"{fields.KIND.of(h.metadata)}/{fields.NAME.of(h.metadata)}" for h, _ in users),
    }
    if cluster:
        metadata[fields.CLUSTER.name] = cluster
    # its id is its key (Kind/namespace/name): no document has it, and ``related`` takes it as it is
    return Hit(id=ref, score=users[0][0].score, text=text, metadata=metadata), best


def is_referenced_only(metadata: Mapping[str, Any]) -> bool:
    return REFERENCED_ONLY in metadata
