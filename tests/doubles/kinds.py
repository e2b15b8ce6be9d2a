"""The kinds a cluster's discovery lists (``kubectl api-resources`` on Kubernetes 1.36) and a few CRDs:
what a store's capability records say in a test that has no cluster."""

from __future__ import annotations

from kubevec.query.kind_vocabulary import Kind, KindVocabulary

#: (kind, group, short names) as discovery says them.
BUILTIN: list[tuple[str, str, tuple[str, ...]]] = [
    ("Pod", "core", ("po",)),
    ("Service", "core", ("svc",)),
    ("ServiceAccount", "core", ("sa",)),
    ("ConfigMap", "core", ("cm",)),
    ("Secret", "core", ()),
    ("Namespace", "core", ("ns",)),
    ("Node", "core", ("no",)),
    ("PersistentVolumeClaim", "core", ("pvc",)),
    ("PersistentVolume", "core", ("pv",)),
    ("Endpoints", "core", ("ep",)),
    ("Event", "core", ("ev",)),
    ("LimitRange", "core", ("limits",)),
    ("ResourceQuota", "core", ("quota",)),
    ("ReplicationController", "core", ("rc",)),
    ("Deployment", "apps", ("deploy",)),
    ("StatefulSet", "apps", ("sts",)),
    ("DaemonSet", "apps", ("ds",)),
    ("ReplicaSet", "apps", ("rs",)),
    ("ControllerRevision", "apps", ()),
    ("Job", "batch", ()),
    ("CronJob", "batch", ("cj",)),
    ("HorizontalPodAutoscaler", "autoscaling", ("hpa",)),
    ("PodDisruptionBudget", "policy", ("pdb",)),
    ("Ingress", "networking.k8s.io", ("ing",)),
    ("IngressClass", "networking.k8s.io", ()),
    ("NetworkPolicy", "networking.k8s.io", ("netpol",)),
    ("IPAddress", "networking.k8s.io", ("ip",)),
    ("Role", "rbac.authorization.k8s.io", ()),
    ("ClusterRole", "rbac.authorization.k8s.io", ()),
    ("RoleBinding", "rbac.authorization.k8s.io", ()),
    ("ClusterRoleBinding", "rbac.authorization.k8s.io", ()),
    ("StorageClass", "storage.k8s.io", ("sc",)),
    ("PriorityClass", "scheduling.k8s.io", ("pc",)),
    ("Lease", "coordination.k8s.io", ()),
    ("EndpointSlice", "discovery.k8s.io", ()),
    ("CustomResourceDefinition", "apiextensions.k8s.io", ("crd", "crds")),
    ("APIService", "apiregistration.k8s.io", ()),
]
CRDS: list[tuple[str, str, tuple[str, ...]]] = [
    ("ServiceMonitor", "monitoring.coreos.com", ("smon",)),
    ("PodMonitor", "monitoring.coreos.com", ("pmon",)),
    ("Prometheus", "monitoring.coreos.com", ("prom",)),
    ("Alertmanager", "monitoring.coreos.com", ("am",)),
    ("Application", "argoproj.io", ("app", "apps")),
    ("Certificate", "cert-manager.io", ("cert", "certs")),
    ("Gateway", "gateway.networking.k8s.io", ("gtw",)),
]


def vocabulary(*, crds: bool = True) -> KindVocabulary:
    listed = BUILTIN + (CRDS if crds else [])
    return KindVocabulary(Kind(name=kind, group=group, short_names=short) for kind, group, short in listed)
