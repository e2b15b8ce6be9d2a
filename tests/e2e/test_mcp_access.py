"""MCP callers with Kubernetes identities on the real control plane: each sees what its RBAC lets it list.

`kubevec run` serves MCP with ``KUBEVEC_MCP_KUBERNETES_AUTH``; agents call it with ServiceAccount
tokens (TokenRequest). Two ServiceAccounts with Roles in different namespaces see disjoint
results; one without any RBAC sees no instance; facets, ``related`` and ``get_document`` reveal
nothing hidden; an RBAC edit shows after the cache's TTL; a token the API server rejects is 401.
"""

from __future__ import annotations

import secrets
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.controlplane.cluster import ControlPlane
from tests.e2e.agents import Agent, serving_tenants, workloads
from tests.e2e.controller_harness import CLUSTER, apply, eventually

pytestmark = pytest.mark.e2e

ADMIN_TOKEN = "e2e-full-access-token-" + secrets.token_hex(8)


def test_each_agent_sees_only_what_its_rbac_lets_it_list(control_plane: ControlPlane, tmp_path: Path) -> None:
    plane = control_plane
    suffix = secrets.token_hex(3)
    ns_a, ns_b = f"tenant-a-{suffix}", f"tenant-b-{suffix}"
    for ns in (ns_a, ns_b):
        apply(plane, workloads(ns))
    with serving_tenants(
        plane,
        tmp_path,
        token=ADMIN_TOKEN,
        namespaces=(ns_a, ns_b),
        KUBEVEC_MCP_TOKEN=ADMIN_TOKEN,
        KUBEVEC_MCP_ACCESS_TTL_SECONDS="2",
    ) as served:
        url, log = served.url, served.log
        admin = Agent(url, ADMIN_TOKEN)
        token = {
            (ns, sa): plane.kubectl("create", "token", sa, "-n", ns, "--duration=1h").strip()
            for ns in (ns_a, ns_b)
            for sa in ("agent", "nobody")
        }
        agent_a, agent_b = Agent(url, token[ns_a, "agent"]), Agent(url, token[ns_b, "agent"])
        nobody = Agent(url, token[ns_a, "nobody"])

        everything = admin.ids(query="web settings", filter={"namespace": {"$in": [ns_a, ns_b]}})
        seen_a = agent_a.ids(query="web settings")
        seen_b = agent_b.ids(query="web settings")
        kinds = {"ConfigMap", "Service", "Deployment"}
        assert {i.split("/")[1] for i in seen_a} == {ns_a}
        assert {i.split("/")[1] for i in seen_b} == {ns_b}
        assert {i.split("/")[4] for i in seen_a} == kinds  # the Role's kinds; not ReplicaSets, not the namespace's SAs
        assert {i.split("/")[4] for i in everything} > kinds  # the admin sees more kinds in the same namespaces
        assert not seen_a & seen_b
        assert nobody.ids(query="web settings") == set()
        assert nobody.ids(kind="Deployment") == set()

        # Nothing hidden leaks through counts, facets, relationships or a document read by id.
        facets_a, facets_none = (
            agent_a.call("list_facets", field="namespace"),
            nobody.call("list_facets", field="namespace"),
        )
        assert facets_a["counts"] == {ns_a: len(agent_a.ids(k=100, filter={"namespace": ns_a}))}
        assert facets_none["counts"] == {}
        assert set(agent_a.call("list_facets", field="kind")["counts"]) == kinds
        b_deployment = f"{CLUSTER}/{ns_b}/apps/v1/Deployment/web"
        assert b_deployment in seen_b
        assert "error" in agent_a.call("get_document", id=b_deployment)
        assert agent_b.call("get_document", id=b_deployment)["id"] == b_deployment
        used_by = agent_a.call("related", id=f"Secret/{ns_b}/db-creds", direction="in", hops=3)
        assert used_by["edges"] == []
        assert agent_b.call("related", id=f"Secret/{ns_b}/db-creds", direction="in")["edges"]
        assert nobody.call("related", id=f"Secret/{ns_a}/db-creds", direction="in")["edges"] == []
        assert "error" in agent_a.call("related", id=b_deployment)

        # A token the API server rejects is 401; an RBAC edit shows after the TTL (2 s here).
        request = urllib.request.Request(
            url, data=b"{}", method="POST", headers={"Authorization": "Bearer not-a-real-token"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401
        apply(
            plane,
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "nobody-reads", "namespace": ns_a},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "agent-reader"},
                "subjects": [{"kind": "ServiceAccount", "name": "nobody", "namespace": ns_a}],
            },
        )
        eventually(
            lambda: nobody.ids(query="web settings") == seen_a, timeout=30, message="the RoleBinding never showed"
        )
    text = log.read_text()
    for value in token.values():
        assert value not in text  # tokens are never logged
    assert "Reviewed an MCP caller's access user=system:serviceaccount:" in text
