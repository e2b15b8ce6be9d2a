"""Resource and document identity: one type formats, one function parses."""

from __future__ import annotations

import pytest

from kubevec.inference.identity import InstanceId, ResourceRef, group_of_resource_id, parse_instance_id


def test_resource_ref_formats_like_kubectl() -> None:
    deployments = ResourceRef.from_api_version("apps/v1", kind="Deployment", plural="deployments")
    assert deployments == ResourceRef(group="apps", version="v1", plural="deployments", kind="Deployment")
    assert deployments.resource_id == "deployments.apps"
    assert deployments.api_version == "apps/v1"
    assert deployments.payload_group == "apps"
    pods = ResourceRef.from_api_version("v1", kind="Pod", plural="pods")
    assert (pods.group, pods.resource_id, pods.api_version, pods.payload_group) == ("", "pods", "v1", "core")


@pytest.mark.parametrize(
    ("ref", "namespace", "expected"),
    [
        (
            ResourceRef(group="apps", version="v1", plural="deployments", kind="Deployment"),
            "shop",
            "c/shop/apps/v1/Deployment/web",
        ),
        (ResourceRef(group="", version="v1", plural="nodes", kind="Node"), None, "c/_cluster/core/v1/Node/web"),
    ],
)
def test_instance_ids_round_trip(ref: ResourceRef, namespace: str | None, expected: str) -> None:
    document_id = ref.instance_id(cluster="c", namespace=namespace, name="web")
    assert document_id == expected
    assert parse_instance_id(document_id) == InstanceId(
        cluster="c", namespace=namespace, group=ref.group, version="v1", kind=ref.kind, name="web"
    )


@pytest.mark.parametrize(
    "not_an_id", ["pods", "certificates.cert-manager.io", "a/b/c", "c//core/v1/Pod/x", "c/n/g/v/K/n/extra"]
)
def test_parse_rejects_what_is_not_an_instance_id(not_an_id: str) -> None:
    assert parse_instance_id(not_an_id) is None


def test_group_of_a_capability_id() -> None:
    assert group_of_resource_id("certificates.cert-manager.io") == "cert-manager.io"
    assert group_of_resource_id("pods") == ""


def test_resource_names_and_api_paths_are_built_in_one_place_each() -> None:
    """issue 31: resource names were built in five modules and API paths in four."""
    from kubevec.controller.kube.resources import api_path
    from kubevec.inference.identity import plural_of, resource_name

    assert resource_name(plural="deployments", group="apps") == "deployments.apps"
    assert resource_name(plural="pods", group="") == "pods"
    assert plural_of("certificates.cert-manager.io") == "certificates"
    assert plural_of("pods") == "pods"
    assert api_path(group="", version="v1") == "/api/v1"
    assert api_path(group="apps", version="v1", plural="deployments", namespace="shop") == (
        "/apis/apps/v1/namespaces/shop/deployments"
    )
    assert api_path(
        group="kubevec.io", version="v1alpha1", plural="syncpolicies", name="all", subresource="status"
    ) == ("/apis/kubevec.io/v1alpha1/syncpolicies/all/status")
