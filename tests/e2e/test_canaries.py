"""Canaries: credentials planted in every place text can come from never reach a stored byte or a log line.

Each canary is a unique token placed once: Secret and ConfigMap data, last-applied, env, args,
annotations, labels, status, and custom-resource specs under credential names (every naming
convention, every value type) and in credential-shaped values under neutral names. Secrets are
opted in through a SyncPolicy, so their objects are read. The objects then change while the
controller runs, so the change history records updates, a creation and a deletion of them. Then
every id, text and metadata value of all three collections, every raw file of the store directory
and the controller's log are scanned.

Stored by design, so no canary is placed there: object names, namespaces, label keys, Secret and
ConfigMap key names, container images.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SYNCPOLICY_CRD
from tests.controlplane.cluster import ControlPlane
from tests.e2e.controller_harness import Controller, apply, eventually, namespaced_crd, stored
from tests.unit.inference.gate_cases import CANARIES

pytestmark = pytest.mark.e2e

NS = "canary"
GROUP = "canary.kubevec.test"
REPO = Path(__file__).resolve().parents[2]


AWS_LABEL = "AKIAKVCANARY07QZ7XXX"  # a label value shaped like an AWS access key id


def canary(n: int) -> str:
    """A unique, greppable token; every placement gets its own number."""
    return f"kvcanary{n:02d}Qz7"


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpA{c}IBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
SSH = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk{c}tdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
PGP = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF{c}xyz\n-----END PGP PRIVATE KEY BLOCK-----"


def spec_placements() -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """A custom-resource spec with a canary in each placement, and the canaries it holds."""
    c = canary
    spec: dict[str, Any] = {
        "region": "eu-west-1",  # a control value that must survive
        "password": c(10),
        "dbPassword": c(11),
        "db_password": c(12),
        "DB-PASSWORD": c(13),
        "passwordValue": c(14),
        "pwd": c(15),
        "passwd": c(16),
        "connectionString": f"Server=db;Database=app;{c(17)}",
        "dsn": f"postgres://app@db/{c(18)}",
        "secret": c(19),
        "clientSecret": c(20),
        "secretAccessKey": c(21),
        "awsAccessKeyId": c(22),
        "apiKey": c(23),
        "api-key": c(24),
        "privateKey": PEM.format(c=c(25)),
        "token": c(26),
        "passwordList": [c(27), c(28)],
        "credentials": {"user": c(29), "secretRef": {"name": "creds", "key": "password"}},
        "backends": [{"name": "a", "token": c(30)}],
        "endpoint": f"https://admin:{c(31)}@api.example.com/v1",
        "notes": f"call it with header Authorization: Basic {c(32)}== please",
        "description": f"send Bearer eyJ{c(33)}.eyJzdWIiOiIxIn0.sig along",
        "claims": f"eyJhbGciOiJIUzI1NiJ9.eyJ{c(34)}.c2ln",
        "sshMaterial": SSH.format(c=c(35)),
        "keyring": PGP.format(c=c(36)),
        "repoAccess": f"ghp_{c(37)}abcdefghijklmnopqrstu",
        "chat": f"xoxb-1234567890-{c(38)}",
        "blobUrl": f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={c(39)}%3D",
        "notify": f"https://hooks.slack.com/services/T000/B000/{c(40)}",
        "connection": f"Host=db;Password={c(41)};Timeout=5",
        "config": f"logLevel: debug\npassword: {c(42)}\n",
        "signature": f"q8Zr3{c(43)}LxV0pT7mN2bW5yK",
        "adminPassword": 972089767740,
        # Short names, command lines and pairs inside strings (each reached the store before).
        "dbPass": c(50),
        "rootPw": c(51),
        "PGPASSWORD": c(52),
        "hmacKey": c(53),
        "args": ["--password", c(54), "--port", "5432"],
        "envFile": f"DB_USER=app DB_PASSWORD={c(55)}",
        "headers": f"X-Api-Key: {c(56)}",
        "settings": f'{{"apiKey": "{c(57)}", "region": "eu"}}',
    }
    v3 = {  # Redaction v3 (issue 27): glued flags, shell strings, nested YAML/JSON, provider prefixes, seeds.
        "region": "eu-central-1",
        "migrate": ["sh", "-c", f"mysql -uroot -p{c(60)} shop < /init.sql"],
        "backupCommand": f"pg_dump --password {c(61)} --verbose shop",
        "healthCheck": f"curl -fsS -u admin:{c(62)} http://localhost/health",
        "appConfig": f"database:\n  host: db\n  password: {c(63)}\n",
        "vendor": f'{{"password": {{"value": "{c(64)}"}}}}',
        "model": f"hf_{c(65)}abcdefghijklmnopqrstuv",
        "otpSeed": f"JBSW{c(67)}",
    }
    canaries = [c(n) for n in (*range(10, 44), *range(50, 58), *range(60, 66), 67)]
    return spec, v3, canaries


def v4_placements() -> tuple[dict[str, Any], list[str]]:
    """Redaction v4 (issue 34): values no list of shapes names, under names that say nothing."""
    c = canary
    spec: dict[str, Any] = {
        "region": "ap-south-1",
        "s3Upload": f"wJalrXUtnFEMI/K7MDENG/{c(70)}bPxRfiCYzq8Kd3",  # an AWS secret away from its AKIA id
        "material": {"id": "AKIAIOSFODNN7EXAMPLE", "blob": f"Lm4Kx9Vb7Nt3{c(71)}Hd6Jw1Fs5Yp0Gc2"},
        "tlsLines": ["-----BEGIN PRIVATE KEY-----", f"MIIEvQ{c(72)}IBADANBgkqhkiG9w0BAQEFAASC", f"Zm9v{c(73)}", "-----END PRIVATE KEY-----"],
        "motDePasse": c(74),
        "contraseña": c(75),
        "пароль": c(76),
        "数据库密码": c(77),
        "params": [{"name": "db-password", "value": c(78)}],
        "opaque": f"q8Zr2Lm4Kx9Vb7Nt3{c(79)}Hd6Jw1Fs5Yp0Gc",
    }  # fmt: skip
    return spec, [c(n) for n in range(70, 80)]


def v5_placements() -> tuple[dict[str, Any], list[str]]:
    """Trust v3 (issue 40): credentials as people write them (DSNs, tool flags, nested pairs, config text,
    short and disguised names, prose, webhook paths, percent-encoding), from tests/unit/inference/gate_cases."""
    spec: dict[str, Any] = {"region": "eu-north-1"}
    planted = []
    for index, (kind, field, value, secret) in enumerate(CANARIES):
        token = canary(100 + index)
        planted.append(token)
        key = field if kind in ("name", "disguised") else f"{field}{index}"
        spec[key] = value.replace(secret, token)
    return spec, planted


def vault_crd() -> dict[str, Any]:
    schema = {"type": "object", "description": "A vault of settings.", "x-kubernetes-preserve-unknown-fields": True}
    return namespaced_crd(group=GROUP, plural="vaults", kind="Vault", schema=schema)


def test_no_canary_reaches_the_store_or_the_log(plane: ControlPlane, tmp_path: Path) -> None:
    c = canary
    plane.kubectl("create", "namespace", NS)
    plane.kubectl("apply", "-f", str(SYNCPOLICY_CRD))
    apply(plane, vault_crd())
    plane.kubectl("wait", "--for=condition=Established", f"crd/vaults.{GROUP}", "crd/syncpolicies.kubevec.io")
    apply(
        plane,
        {
            "apiVersion": "kubevec.io/v1alpha1",
            "kind": "SyncPolicy",
            "metadata": {"name": "all"},
            "spec": {"secrets": True},
        },
    )
    spec, v3, planted = spec_placements()
    v4, planted_v4 = v4_placements()
    v5, planted_v5 = v5_placements()
    planted += planted_v4 + planted_v5
    last_applied = json.dumps({"kind": "Secret", "stringData": {"password": c(1)}})
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "db",
                "namespace": NS,
                "annotations": {
                    "example.com/api-token": c(2),
                    "kubectl.kubernetes.io/last-applied-configuration": last_applied,
                },
            },
            "data": {"password": base64.b64encode(c(3).encode()).decode()},
            "stringData": {"token": c(4)},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": NS},
            "data": {"LOG_LEVEL": c(5)},
            "binaryData": {"blob": base64.b64encode(c(6).encode()).decode()},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "payments",
                "namespace": NS,
                "labels": {"app": "payments", "aws-key": AWS_LABEL},
                "annotations": {
                    "example.com/description": f"Payments API; admin at https://root:{c(8)}@admin.example.com",
                    "example.com/owner": f"team payments, Bearer {c(9)}abc",
                },
            },
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "payments"}},
                "template": {
                    "metadata": {"labels": {"app": "payments"}},
                    "spec": {
                        "initContainers": [
                            {"name": "init", "image": "busybox", "env": [{"name": "T", "value": c(44)}]}
                        ],
                        "containers": [
                            {
                                "name": "api",
                                "image": "ghcr.io/acme/payments:1.0",
                                "env": [{"name": "DB_PASSWORD", "value": c(45)}],
                                "args": ["--token", c(46)],
                                "command": ["serve", f"--dsn=postgres://u:{c(47)}@db/app"],
                            }
                        ],
                    },
                },
            },
        },
        {"apiVersion": f"{GROUP}/v1", "kind": "Vault", "metadata": {"name": "main", "namespace": NS}, "spec": spec},
        {"apiVersion": f"{GROUP}/v1", "kind": "Vault", "metadata": {"name": "v3", "namespace": NS}, "spec": v3},
        {"apiVersion": f"{GROUP}/v1", "kind": "Vault", "metadata": {"name": "v4", "namespace": NS}, "spec": v4},
        {"apiVersion": f"{GROUP}/v1", "kind": "Vault", "metadata": {"name": "v5", "namespace": NS}, "spec": v5},
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Vault",
            "metadata": {"name": "with-status", "namespace": NS},
            "spec": {"region": "us-east-1"},
            "status": {"lastError": f"login failed for {c(48)}", "token": c(49)},
        },
    ]
    apply(plane, objects)
    planted += [c(n) for n in range(1, 10) if n != 7] + [c(n) for n in range(44, 50)] + [AWS_LABEL[4:]]
    assert len(set(planted)) >= 45

    controller = Controller(plane, tmp_path / "store", tmp_path / "kubevec.log", KUBEVEC_LOG_LEVEL="DEBUG")
    try:
        controller.start()
        controller.wait_ready()
        controller.converged()
        # then the cluster changes while it runs, so the change history holds every kind of record:
        # each object once more with one label more, a Vault with the canaries created, one deleted
        for obj in objects:
            obj["metadata"].setdefault("labels", {})["rev"] = "2"
        late = {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Vault",
            "metadata": {"name": "late", "namespace": NS},
            "spec": spec,
        }
        apply(plane, [*objects, late])
        plane.kubectl("delete", f"vaults.{GROUP}", "with-status", "-n", NS)

        def recorded() -> bool:
            kinds = {
                (r["metadata"]["change"], r["metadata"]["name"]) for r in stored(controller.store, "changes").values()
            }
            return {
                ("created", "late"),
                ("deleted", "with-status"),
                ("updated", "payments"),
                ("updated", "db"),
            } <= kinds

        eventually(recorded, timeout=60, message="the changes were not recorded")
        controller.converged()
    finally:
        controller.stop()

    instances = stored(controller.store, "instances")
    capabilities = stored(controller.store, "capabilities")
    changes = stored(controller.store, "changes")
    assert len(changes) >= len(objects)  # every object updated, one created, one deleted
    vault = instances[f"faults/{NS}/{GROUP}/v1/Vault/main"]
    assert "region: eu-west-1" in vault["text"]  # the control value survived
    assert "eu-central-1" in instances[f"faults/{NS}/{GROUP}/v1/Vault/v3"]["text"]
    assert "ap-south-1" in instances[f"faults/{NS}/{GROUP}/v1/Vault/v4"]["text"]
    secret = instances[f"faults/{NS}/core/v1/Secret/db"]
    assert "keys: password, token" in secret["text"]  # key names are kept by design
    everything = json.dumps([instances, capabilities, changes])
    raw = b"".join(path.read_bytes() for path in sorted(controller.store.rglob("*")) if path.is_file())
    log = controller.log.read_text(errors="replace")
    leaks = []
    for token in sorted(set(planted)):
        forms = {token, base64.b64encode(token.encode()).decode().rstrip("=")}
        for form in forms:
            if form in everything:
                leaks.append(f"{token} in documents")
            if form.encode() in raw:
                leaks.append(f"{token} in the store's files")
            if form in log:
                leaks.append(f"{token} in the log")
    assert "972089767740" not in everything
    assert not leaks, leaks
