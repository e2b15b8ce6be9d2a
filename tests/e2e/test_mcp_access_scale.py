"""Access v2 on the real control plane: identities, expiry, the token file that follows its Secret,
and per-caller limits (issue 34).

`kubevec run` serves MCP with Kubernetes tokens (local RBAC, the default), a static token file and
small per-caller caps. A second token of a ServiceAccount costs a TokenReview and no
SubjectAccessReview; a token signed with the cluster's own ServiceAccount key that expires in a
few seconds is answered until then and refused (401) on its session's next call; a token removed
from the file is refused; a glob sees its namespaces; a bad file keeps the last good set; one caller
at its session cap gets 429 while another still connects.
"""

from __future__ import annotations

import concurrent.futures
import secrets
import time
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest

from tests.controlplane.cluster import ControlPlane
from tests.e2e.agents import Agent, serving_tenants, workloads
from tests.e2e.controller_harness import apply, eventually

pytestmark = pytest.mark.e2e

ISSUER = "https://kubernetes.default.svc.cluster.local"  # the test control plane's --service-account-issuer
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def tokens_file(path: Path, entries: list[str]) -> None:
    """Replace the file at once, as the kubelet swaps a Secret volume's files."""
    staged = path.with_suffix(".new")
    staged.write_text("tokens:\n" + "".join(f"  - {e}\n" for e in entries))
    staged.replace(path)


def short_lived_token(plane: ControlPlane, *, namespace: str, name: str, seconds: float) -> str:
    """A ServiceAccount token as the API server issues them, but expiring in seconds (TokenRequest's minimum is 10 min)."""
    uid = plane.kubectl("get", "serviceaccount", name, "-n", namespace, "-o", "jsonpath={.metadata.uid}").strip()
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "aud": [ISSUER],
        "sub": f"system:serviceaccount:{namespace}:{name}",
        "iat": now,
        "nbf": now,
        "exp": now + int(seconds),
        "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
    }
    return jwt.encode(claims, (plane.workdir / "sa.key").read_text(), algorithm="RS256")


class Session:
    """One MCP session over plain HTTP, so each answer's status is seen (the SDK client raises instead)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token, self.id = url, token, ""
        self.next = 0

    def open(self) -> httpx2.Response:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}}  # fmt: skip
        answer = self.post(body)
        self.id = answer.headers.get("mcp-session-id", "")
        if self.id:
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def search(self, **arguments: Any) -> httpx2.Response:
        self.next += 1
        call = {"name": "vector_search", "arguments": {"collection": "instances", "k": 50, **arguments}}
        return self.post({"jsonrpc": "2.0", "id": self.next, "method": "tools/call", "params": call})

    def post(self, body: dict[str, Any]) -> httpx2.Response:
        headers = {**ACCEPT, "Authorization": f"Bearer {self.token}"}
        if self.id:
            headers["mcp-session-id"] = self.id
        return httpx2.post(self.url, json=body, headers=headers, timeout=30)


def test_identities_expiry_token_file_and_per_caller_limits(control_plane: ControlPlane, tmp_path: Path) -> None:
    plane = control_plane
    suffix = secrets.token_hex(3)
    ns_a, ns_b = f"tenant-a-{suffix}", f"tenant-b-{suffix}"
    for ns in (ns_a, ns_b):
        apply(plane, workloads(ns))
    ops, glob, gone = (f"{who}-token-{secrets.token_hex(8)}" for who in ("ops", "glob", "gone"))
    path = tmp_path / "tokens.yaml"
    tokens_file(
        path,
        [
            f"{{name: ops, token: {ops}, namespaces: ['*']}}",
            f"{{name: glob, token: {glob}, namespaces: ['tenant-a-{suffix[:5]}*']}}",  # this test's tenant a only
            f"{{name: gone, token: {gone}, namespaces: [{ns_b}]}}",
        ],
    )
    issued: list[str] = []
    with serving_tenants(
        plane,
        tmp_path,
        token=ops,
        namespaces=(ns_a, ns_b),
        KUBEVEC_MCP_TOKENS_FILE=str(path),
        KUBEVEC_MCP_ACCESS_TTL_SECONDS="30",
        KUBEVEC_MCP_MAX_SESSIONS="8",
        KUBEVEC_MCP_CALLER_SESSIONS="3",
    ) as served:
        url, metric = served.url, served.metric
        log = served.log

        # 1. Identity, not token: the second token of the ServiceAccount asks no SubjectAccessReview.
        first, second = (plane.kubectl("create", "token", "agent", "-n", ns_a).strip() for _ in range(2))
        issued += [first, second]
        seen = Agent(url, first).ids(query="web settings")
        assert {i.split("/")[1] for i in seen} == {ns_a}
        reviews = metric("kubevec_mcp_access_reviews_total", kind="subjectaccessreview")
        token_reviews = metric("kubevec_mcp_access_reviews_total", kind="tokenreview")
        assert reviews == 2  # local RBAC: capabilities and cluster-wide list, however many placements
        assert metric("kubevec_mcp_access_reviews_total", kind="rbac_read") >= 1
        assert Agent(url, second).ids(query="web settings") == seen
        assert metric("kubevec_mcp_access_reviews_total", kind="subjectaccessreview") == reviews
        assert metric("kubevec_mcp_access_reviews_total", kind="tokenreview") == token_reviews + 1

        # 2. A token's expiry is honoured on its open session, though the TTL (30 s) has not run out.
        expiring = short_lived_token(plane, namespace=ns_b, name="agent", seconds=8)
        issued.append(expiring)
        session = Session(url, expiring)
        assert session.open().status_code == 200
        answered = session.search(query="web settings")
        assert answered.status_code == 200
        assert ns_b in answered.text
        assert ns_a not in answered.text
        time.sleep(max(0.0, jwt.decode(expiring, options={"verify_signature": False})["exp"] - time.time() + 1))
        assert session.search(query="web settings").status_code == 401

        # 3. The token file follows its Secret: a glob sees its namespaces, a removed token is refused,
        #    a bad file keeps the last good set.
        assert {i.split("/")[1] for i in Agent(url, glob).ids(query="web settings")} == {ns_a}
        assert {i.split("/")[1] for i in Agent(url, gone).ids(query="web settings")} == {ns_b}
        tokens_file(
            path,
            [
                f"{{name: ops, token: {ops}, namespaces: ['*']}}",
                f"{{name: glob, token: {glob}, namespaces: ['tenant-?-{suffix}']}}",
            ],
        )
        eventually(lambda: Session(url, gone).open().status_code == 401, timeout=10, message="a removed token worked")
        eventually(
            lambda: {i.split("/")[1] for i in Agent(url, glob).ids(query="web settings")} == {ns_a, ns_b},
            timeout=10,
            message="the widened glob never showed",
        )
        tokens_file(
            path,
            [
                f"{{name: ops, token: {ops}, namespaces: ['*']}}",
                f"{{name: glob, token: {glob}, namespaces: [Tenant_A]}}",
            ],
        )

        def noticed() -> bool:
            Session(url, ops).post({})  # the file is looked at (once a second at most) when a request comes
            return metric("kubevec_mcp_token_file_reloads_total", result="error") == 1

        eventually(noticed, timeout=10, message="the bad file was not noticed")
        assert {i.split("/")[1] for i in Agent(url, glob).ids(query="web settings")} == {ns_a, ns_b}  # kept

        # 4. One caller at its session cap (3) is refused with 429; another caller still connects.
        opened = [Session(url, ops).open() for _ in range(4)]
        assert [a.status_code for a in opened].count(429) >= 1
        refused = next(a for a in opened if a.status_code == 429)
        assert int(refused.headers["retry-after"]) >= 1
        assert Session(url, first).open().status_code == 200
        assert metric("kubevec_mcp_refused_total", reason="caller_sessions") >= 1
    text = log.read_text()
    for value in (*issued, ops, glob, gone):
        assert value not in text  # tokens are never logged
    assert "Refused an expired MCP token" in text
    assert "Kept the last good MCP token file" in text
    assert "Read the cluster's RBAC objects" in text


def test_reviews_mode_is_paced_by_the_budget_and_a_caller_behind_it_is_told_when_to_come_back(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """``reviews`` mode asks per (namespace, resource); the shared budget paces the first caller and
    answers the next one 503 with Retry-After at once instead of queueing it behind the first."""
    plane = control_plane
    suffix = secrets.token_hex(3)
    ns_a, ns_b = f"tenant-a-{suffix}", f"tenant-b-{suffix}"
    for ns in (ns_a, ns_b):
        apply(plane, workloads(ns))
    ops = f"ops-token-{secrets.token_hex(8)}"
    path = tmp_path / "tokens.yaml"
    tokens_file(path, [f"{{name: ops, token: {ops}, namespaces: ['*']}}"])
    with serving_tenants(
        plane,
        tmp_path,
        token=ops,
        namespaces=(ns_a, ns_b),
        KUBEVEC_MCP_AUTHORIZATION="reviews",
        KUBEVEC_MCP_TOKENS_FILE=str(path),
        KUBEVEC_MCP_REVIEWS_PER_SECOND="10",
        KUBEVEC_MCP_REVIEWS_BURST="10",
        KUBEVEC_MCP_REVIEW_MAX_WAIT_SECONDS="1",
    ) as served:
        url, metric = served.url, served.metric
        first, other = (plane.kubectl("create", "token", "agent", "-n", ns).strip() for ns in (ns_a, ns_b))
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            started = time.monotonic()
            opening = pool.submit(lambda: Session(url, first).open().status_code)
            time.sleep(0.7)  # the first caller has reserved its reviews and is being paced
            refused = Session(url, other).open()  # behind seconds of the first one's reviews: come back later
            assert opening.result(timeout=120) == 200
            paced = time.monotonic() - started
        assert refused.status_code == 503
        assert int(refused.headers["retry-after"]) >= 1
        assert metric("kubevec_mcp_refused_total", reason="review_budget") == 1
        asked = metric("kubevec_mcp_access_reviews_total", kind="subjectaccessreview")
        assert asked > 20  # many more than the 2 of rbac mode: every placement in the index
        assert paced >= (asked + 1 - 10) / 10 * 0.9  # within the budget: 10 per second after a burst of 10
        seen = Agent(url, first).ids(query="web settings")
        assert {i.split("/")[1] for i in seen} == {ns_a}  # the same view as rbac mode gives
