"""What a document says about shapes the first builders missed: kinds configured at the top level,
what a disruption budget is for, a StatefulSet's claims and Service, placement keys and programs."""

from __future__ import annotations

from typing import Any

from kubevec.inference.instances import build_instance


def _stateful(**pod: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "dbc1", "namespace": "db"},
        "spec": {
            "serviceName": "mysql",
            "template": {"spec": {"containers": [{"name": "mysql", "image": "mysql:8"}], **pod}},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "storageClassName": "fast-ssd",
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "10Gi"}},
                    },
                }
            ],
        },
    }


def test_a_kind_configured_at_the_top_level_says_its_fields() -> None:
    storage_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast"},
        "provisioner": "pd.csi.storage.gke.io",
        "reclaimPolicy": "Retain",
        "parameters": {"type": "pd-balanced"},
    }
    text = build_instance(storage_class, plural="storageclasses").text
    for part in ("provisioner: pd.csi.storage.gke.io", "reclaimPolicy: Retain", "parameters.type: pd-balanced"):
        assert part in text


def test_a_top_level_kind_never_says_values_of_data() -> None:
    odd = {"apiVersion": "example.com/v1", "kind": "Odd", "metadata": {"name": "o"}, "data": {"k": "Qz7mapleRiver"}}
    assert "Qz7mapleRiver" not in build_instance(odd, plural="odds").text


def test_a_disruption_budget_says_what_it_is_for() -> None:
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "db"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "mysql"}}},
    }
    text = build_instance(budget, plural="poddisruptionbudgets").text
    assert "maxUnavailable: 1" in text
    assert "voluntary disruptions (evictions, node drains)" in text


def test_a_stateful_set_says_its_governing_service_and_the_claims_of_each_replica() -> None:
    text = build_instance(_stateful(), plural="statefulsets").text
    assert "governing service: mysql" in text
    assert "claims per replica: data 10Gi ReadWriteOnce storageClass fast-ssd" in text


def test_placement_says_the_topology_keys_pods_are_spread_by() -> None:
    anti = {"labelSelector": {"matchLabels": {"app": "mysql"}}, "topologyKey": "kubernetes.io/hostname"}
    preferred = {"weight": 1, "podAffinityTerm": {"topologyKey": "topology.kubernetes.io/region"}}
    pod = {
        "affinity": {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti]},
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [preferred]},
        },
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone"}],
    }
    text = build_instance(_stateful(**pod), plural="statefulsets").text
    assert "affinity: podAffinity by topology.kubernetes.io/region, podAntiAffinity by kubernetes.io/hostname" in text
    assert "spread across: topology.kubernetes.io/zone (maxSkew 1, DoNotSchedule)" in text


def _runs(container: dict[str, Any]) -> str:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "x"},
        "spec": {"containers": [{"name": "c", "image": "app:1", **container}]},
    }
    return build_instance(pod, plural="pods").text


def test_a_container_says_the_program_it_runs_and_its_flags_by_name() -> None:
    assert "runs locust --autostart" in _runs({"command": ["locust", "--autostart"]})
    assert "runs torchserve --start --foreground" in _runs({"args": ["torchserve", "--start", "--foreground"]})
    assert "runs server --verbose" in _runs({"command": ["/usr/bin/server"], "args": ["--verbose"]})
    assert "runs --verbose" in _runs({"args": ["--verbose"]})  # the image's own program, unnamed: flags only


def test_a_containers_arguments_are_never_said_only_flag_names() -> None:
    text = _runs({"command": ["app", "--password=Qz7mapleRiver", "--token", "Xk9pineLake", "-pWq4birchFen"]})
    assert "runs app --token" in text  # the gate took ``--password=...`` whole; the name alone would do
    for secret in ("Qz7mapleRiver", "Xk9pineLake", "Wq4birchFen"):
        assert secret not in text
    assert " runs" not in _runs({"args": ["/etc/app/config.yaml"]})


def test_a_namespace_with_a_digit_stays_itself_beside_an_address_the_gate_sets_aside() -> None:
    """The gate's placeholders and the document's own were the same marks: ``namespace: t5-serving`` read as
    the host of the URL beside it (``t5-inference``), or ``<redacted>`` past the number of URLs."""
    ui = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "fastdash", "namespace": "t5-serving", "uid": "e36cf888-bb70-449c-b19f-c81816a0461f"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "fastdash:1",
                            "env": [{"name": "MODEL_PREDICTION", "value": "http://t5-inference:8080/predictions"}],
                        }
                    ]
                }
            }
        },
    }
    document = build_instance(ui, plural="deployments").to_document()
    assert "namespace: t5-serving |" in document.text
    assert "Service http://t5-inference:8080 (MODEL_PREDICTION)" in document.text


def test_no_object_forges_a_placeholder() -> None:
    forged = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a1", "namespace": "n2",
              "annotations": {"description": "see \ue0020\ue003 and \ue0000\ue001"}}}  # fmt: skip
    text = build_instance(forged, plural="configmaps").to_document().text
    assert "\ue000" not in text
    assert "\ue002" not in text
    assert "see 0 and 0" in text
