"""Where a workload keeps its files and the name its pod answers to: facts agents ask for by name."""

from __future__ import annotations

from kubevec.inference.bodies import as_body
from kubevec.inference.instances import build_instance

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def database(**pod: object) -> str:
    container = {
        "name": "mongo",
        "image": "mongo:4.4.6",
        "volumeMounts": [
            {"name": "data", "mountPath": "/data/db"},
            {"name": "config", "mountPath": "/etc/mongo", "readOnly": True},
            {"name": "odd", "mountPath": f"/run/{TOKEN}"},
            {"name": "no-path"},
        ],
    }
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "mongodb-geo", "namespace": "hotel", "uid": "u-1"},
        "spec": {"template": {"spec": {"containers": [container], **pod}}},
    }
    return build_instance(as_body(obj), plural="deployments").text


def test_mounts_say_path_and_volume() -> None:
    text = database()
    assert "mounts /data/db (data), /etc/mongo (config, read-only)" in text
    assert TOKEN not in text  # a path is judged like any value


def test_the_pods_hostname_and_subdomain_are_said() -> None:
    text = database(hostname="geo-db", subdomain="mongo")
    assert "hostname: geo-db" in text
    assert "subdomain: mongo" in text
    assert "hostname" not in database()


def test_the_update_strategy_is_said() -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "geo", "namespace": "hotel", "uid": "u-2"},
        "spec": {"strategy": {"type": "Recreate"}, "template": {"spec": {"containers": [{"name": "geo"}]}}},
    }
    assert "strategy: Recreate" in build_instance(as_body(obj), plural="deployments").text
    obj["kind"], obj["spec"] = (
        "StatefulSet",
        {"updateStrategy": {"type": "OnDelete"}, "template": obj["spec"]["template"]},
    )
    assert "strategy: OnDelete" in build_instance(as_body(obj), plural="statefulsets").text
