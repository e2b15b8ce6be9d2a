"""Who is calling the MCP endpoint, asked of the API server: TokenReview and SubjectAccessReview.

The process serving agents needs no read access to the cluster for this: ``create`` on
``tokenreviews`` and ``subjectaccessreviews`` (the built-in ``system:auth-delegator`` ClusterRole)
is all. Errors are :class:`ReviewUnavailable`, so a caller is refused (503) rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Final

from kubevec.controller.kube.client import ClusterReader, KubeReader
from kubevec.controller.kube.resources import api_path
from kubevec.controller.settings import Settings
from kubevec.core.errors import KubeError, ReviewUnavailable
from kubevec.query.access import Authorizer, Identity, Placement, ReviewBudget, StaticTokenFile
from kubevec.query.oidc import OutsideIdentities, read_issuers
from kubevec.query.rbac import RbacSnapshot

TOKEN_REVIEWS: Final = api_path(group="authentication.k8s.io", version="v1", plural="tokenreviews")
ACCESS_REVIEWS: Final = api_path(group="authorization.k8s.io", version="v1", plural="subjectaccessreviews")
#: The four kinds of RBAC object, listed in all namespaces for local matching (``kubevec.query.rbac``).
RBAC_PATHS: Final = {
    plural: api_path(group="rbac.authorization.k8s.io", version="v1", plural=plural)
    for plural in ("clusterroles", "clusterrolebindings", "roles", "rolebindings")
}


class KubeReviewer:
    """:class:`kubevec.query.access.Reviewer` over the API server, with this process's own credentials."""

    def __init__(self, *, kube: ClusterReader, audiences: Sequence[str] = ()) -> None:
        self.kube = kube
        self.audiences = list(audiences)

    async def authenticate(self, token: str) -> Identity | None:
        spec: dict[str, Any] = {"token": token}
        if self.audiences:
            spec["audiences"] = self.audiences
        review = await self._post(
            TOKEN_REVIEWS, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        )
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return None
        user = status.get("user") or {}
        extra = user.get("extra") or {}
        return Identity(
            user=str(user.get("username", "")),
            uid=str(user.get("uid", "")),
            groups=tuple(str(g) for g in user.get("groups") or ()),
            extra=tuple(sorted((str(k), tuple(str(v) for v in vs)) for k, vs in extra.items())),
        )

    async def allowed(
        self,
        identity: Identity,
        *,
        verb: str,
        group: str = "",
        resource: str = "",
        namespace: str = "",
        path: str = "",
    ) -> bool:
        spec: dict[str, Any] = {"user": identity.user, "groups": list(identity.groups)}
        if identity.uid:
            spec["uid"] = identity.uid
        if identity.extra:
            spec["extra"] = {key: list(values) for key, values in identity.extra}
        if path:
            spec["nonResourceAttributes"] = {"path": path, "verb": verb}
        else:
            attributes = {"verb": verb, "group": group, "resource": resource}
            if namespace:
                attributes["namespace"] = namespace
            spec["resourceAttributes"] = attributes
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        review = await self._post(ACCESS_REVIEWS, body)
        return bool((review.get("status") or {}).get("allowed"))

    async def rbac(self) -> RbacSnapshot:
        """Every ClusterRole, ClusterRoleBinding, Role and RoleBinding: four listings (paged), for all callers.

        Needs ``list`` on those four resources (the chart grants it with ``mcp.authorization: rbac``);
        a refusal is :class:`ReviewUnavailable` naming what is missing, so callers get 503, never a guess.
        """
        found: dict[str, list[dict[str, Any]]] = {}
        for name, path in RBAC_PATHS.items():
            items: list[dict[str, Any]] = []
            token: str | None = None
            while True:
                query: dict[str, Any] = {"limit": 500}
                if token:
                    query["continue"] = token
                try:
                    page = await self.kube.get(path, query=query)
                except KubeError as exc:
                    raise ReviewUnavailable(
                        f"cannot list {name} for local RBAC ({exc.reason}); grant list on "
                        "rbac.authorization.k8s.io roles, rolebindings, clusterroles and clusterrolebindings, "
                        "or set KUBEVEC_MCP_AUTHORIZATION=reviews"
                    ) from exc
                items.extend(item for item in (page or {}).get("items") or () if isinstance(item, dict))
                token = ((page or {}).get("metadata") or {}).get("continue")
                if not token:
                    break
            found[name] = items
        return RbacSnapshot(
            cluster_roles=found["clusterroles"],
            cluster_role_bindings=found["clusterrolebindings"],
            roles=found["roles"],
            role_bindings=found["rolebindings"],
        )

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = await self.kube.post(path, body)
        except KubeError as exc:
            raise ReviewUnavailable(f"{path.rsplit('/', 1)[-1]}: {exc.reason}") from exc
        return answer if isinstance(answer, dict) else {}


def build_authorizer(
    settings: Settings,
    *,
    placements: Callable[[], Awaitable[Iterable[Placement]]],
    kube: ClusterReader | None = None,
) -> Authorizer:
    """The MCP endpoint's authorizer from settings: the one token, static tokens, Kubernetes callers."""
    static: StaticTokenFile | tuple[()] = StaticTokenFile(settings.mcp_tokens_file) if settings.mcp_tokens_file else ()
    reviewer = None
    outside = None
    if settings.mcp_authentication_config is not None:
        outside = OutsideIdentities(issuers=read_issuers(settings.mcp_authentication_config))
    if settings.mcp_kubernetes_auth or outside is not None:
        reader = kube or KubeReader(kubeconfig=settings.kubeconfig, context=settings.kube_context)
        reviewer = KubeReviewer(kube=reader, audiences=settings.mcp_audiences)
    return Authorizer(
        cluster=settings.cluster_name,
        full_token=settings.mcp_token.get_secret_value() if settings.mcp_token else None,
        static=static,
        reviewer=reviewer,
        kubernetes_tokens=settings.mcp_kubernetes_auth,
        outside=outside,
        placements=placements,
        rbac=reviewer.rbac if reviewer is not None and settings.mcp_authorization == "rbac" else None,
        budget=ReviewBudget(
            rate=settings.mcp_reviews_per_second,
            burst=settings.mcp_reviews_burst,
            max_wait=settings.mcp_review_max_wait_seconds,
        ),
        ttl=settings.mcp_access_ttl_seconds,
    )
