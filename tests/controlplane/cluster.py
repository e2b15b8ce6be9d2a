"""A real, throwaway Kubernetes control plane: etcd + kube-apiserver (+ kube-controller-manager).

Used by the session-scoped pytest fixture and by ``make demo``. It is envtest-shaped: no nodes,
no kubelet, no scheduler, so pods stay Pending, but every API, watch, CRD, RBAC rule and
admission step is the real thing. Binaries come from ``build.sh`` (built once from the Go module
proxy, cached under ``~/.cache/kubevec/k8s/<version>/``).

Every process started here is stopped on exit, also when a test fails or is interrupted: the
processes run in their own session, are registered with ``atexit`` and are killed as a group.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
READER_USER = "kubevec-reader"
IMPOSTOR_USER = "static:ops"

_live: list[ControlPlane] = []


def build_binaries(*, quiet: bool = False) -> Path:
    """Build (or reuse) the control plane binaries and return the directory holding them."""
    proc = subprocess.run(
        ["bash", str(HERE / "build.sh")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if quiet else None,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"Building the control plane failed (exit {proc.returncode}); run tests/controlplane/build.sh"
        )
    return Path(proc.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclasses.dataclass
class ControlPlane:
    """One etcd + kube-apiserver (+ optional kube-controller-manager) on loopback ports."""

    bin_dir: Path
    workdir: Path
    controllers: Sequence[str] = (
        "namespace",
        "garbagecollector",
        "serviceaccount",
        "serviceaccount-token",
        "deployment",
        "replicaset",
    )
    admin_token: str = dataclasses.field(default_factory=lambda: secrets.token_hex(16))
    reader_token: str = dataclasses.field(default_factory=lambda: secrets.token_hex(16))
    #: A user the API server knows by a name shaped like kubevec's own caller names (``static:ops``).
    impostor_token: str = dataclasses.field(default_factory=lambda: secrets.token_hex(16))
    port: int = 0
    etcd_port: int = 0
    _procs: list[tuple[str, subprocess.Popen[bytes], IO[bytes]]] = dataclasses.field(default_factory=list)
    _argv: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    @property
    def reader_kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig-reader"

    @property
    def kubectl_path(self) -> Path:
        return self.bin_dir / "kubectl"

    def start(self, *, timeout: float = 120.0) -> None:
        _live.append(self)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write_keys_and_tokens()
        etcd_port, peer_port = free_port(), free_port()
        self.etcd_port = etcd_port
        self._spawn(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name=default",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ],
        )
        self.port = free_port()
        certs = self.workdir / "certs"
        self._spawn(
            "kube-apiserver",
            [
                str(self.bin_dir / "kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                f"--cert-dir={certs}",
                f"--secure-port={self.port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--service-cluster-ip-range=10.0.0.0/16",  # a /24 runs out at ~250 Services
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={self.workdir / 'sa.pub'}",
                f"--service-account-signing-key-file={self.workdir / 'sa.key'}",
                "--authorization-mode=RBAC",
                f"--token-auth-file={self.workdir / 'tokens.csv'}",
                "--allow-privileged=true",
                "--disable-admission-plugins=ServiceAccount",
                "--v=0",
            ],
        )
        self._wait_ready(timeout=timeout)
        self.write_kubeconfig(self.kubeconfig, user="admin", token=self.admin_token)
        self.write_kubeconfig(self.reader_kubeconfig, user=READER_USER, token=self.reader_token)
        if self.controllers:
            self._spawn(
                "kube-controller-manager",
                [
                    str(self.bin_dir / "kube-controller-manager"),
                    f"--kubeconfig={self.kubeconfig}",
                    f"--controllers={','.join(self.controllers)}",
                    f"--service-account-private-key-file={self.workdir / 'sa.key'}",
                    f"--root-ca-file={certs / 'apiserver.crt'}",
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--v=0",
                ],
            )

    def stop(self) -> None:
        """Stop every process this control plane started, newest first; never raises."""
        while self._procs:
            _, proc, log = self._procs.pop()
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
            log.close()
        if self in _live:
            _live.remove(self)

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers used by tests and the demo ----------------------------------------------------

    def kubectl(self, *args: str, input: str | None = None, reader: bool = False, check: bool = True) -> str:
        """Run the matching kubectl against this control plane; return stdout."""
        config = self.reader_kubeconfig if reader else self.kubeconfig
        for attempt in range(20):
            proc = subprocess.run(
                [str(self.kubectl_path), f"--kubeconfig={config}", *args],
                input=input,
                capture_output=True,
                text=True,
                check=False,
                timeout=120,
            )
            # `kubectl wait --for=condition=...` gives up at once on an object whose status has no
            # conditions yet (a CRD in its first milliseconds): ask again instead of failing the test
            if args[:1] == ("wait",) and proc.returncode != 0 and "accessor error: <nil>" in proc.stderr:
                time.sleep(0.25 * (attempt + 1))
                continue
            break
        if check and proc.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def grant_reader(self, *, rules: list[dict[str, Any]] | None = None) -> Path:
        """Bind the restricted user to get/list/watch on everything (plus ``rules``); return its kubeconfig."""
        all_rules: list[dict[str, Any]] = [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]},
            {"nonResourceURLs": ["*"], "verbs": ["get"]},
            *(rules or []),
        ]
        manifest = {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRole",
                    "metadata": {"name": READER_USER},
                    "rules": all_rules,
                },
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": READER_USER},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": READER_USER},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": READER_USER}],
                },
            ],
        }
        self.kubectl("apply", "-f", "-", input=json.dumps(manifest))
        return self.reader_kubeconfig

    def get_json(self, path: str) -> Any:
        """GET a raw API path as the admin user (for discovery assertions)."""
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.admin_token}"})
        with urllib.request.urlopen(request, context=_insecure_context(), timeout=10) as response:
            return json.loads(response.read())

    # -- faults ---------------------------------------------------------------------------------

    def kill(self, name: str) -> None:
        """SIGKILL one component (``kube-apiserver``, ``etcd``, ...); :meth:`restart` brings it back."""
        for entry in list(self._procs):
            component, proc, log = entry
            if component == name:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
                log.close()
                self._procs.remove(entry)

    def restart(self, name: str, *, timeout: float = 120.0) -> None:
        """Start a killed component again, same flags, ports and certificates; wait for the API."""
        self._spawn(name, self._argv[name])
        if name == "kube-apiserver":
            self._wait_ready(timeout=timeout)

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision (through its JSON gateway): open watches get 410 Gone."""

        def post(path: str, body: dict[str, Any]) -> Any:
            request = urllib.request.Request(
                f"http://127.0.0.1:{self.etcd_port}{path}", data=json.dumps(body).encode(), method="POST"
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())

        revision = int(post("/v3/kv/range", {"key": "AA=="})["header"]["revision"])
        post("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def pids(self) -> dict[str, int]:
        """The running processes by name (etcd, kube-apiserver, ...), for benchmarks that count their CPU."""
        return {name: proc.pid for name, proc, _ in self._procs if proc.poll() is None}

    # -- internals -----------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str]) -> None:
        self._argv[name] = argv
        log = open(self.workdir / f"{name}.log", "ab")  # noqa: SIM115 - closed in stop()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._procs.append((name, proc, log))

    def _check_alive(self) -> None:
        for name, proc, _ in self._procs:
            if proc.poll() is not None:
                tail = (self.workdir / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with code {proc.returncode}:\n{tail}")

    def _wait_ready(self, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last_error = ""
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                request = urllib.request.Request(
                    self.url + "/readyz", headers={"Authorization": f"Bearer {self.admin_token}"}
                )
                with urllib.request.urlopen(request, context=_insecure_context(), timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last_error = str(exc)
            time.sleep(0.25)
        raise TimeoutError(f"kube-apiserver at {self.url} was not ready in {timeout}s: {last_error}")

    def _write_keys_and_tokens(self) -> None:
        key, pub = self.workdir / "sa.key", self.workdir / "sa.pub"
        if not key.exists():
            subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
            subprocess.run(
                ["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)], check=True, capture_output=True
            )
        (self.workdir / "tokens.csv").write_text(
            f'{self.admin_token},admin,admin,"system:masters"\n{self.reader_token},{READER_USER},{READER_USER}\n'
            f"{self.impostor_token},{IMPOSTOR_USER},impostor\n"
        )

    def write_kubeconfig(self, path: Path, *, user: str, token: str) -> None:
        """A kubeconfig for this control plane that authenticates with ``token``."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "kubevec-test",
                    # The apiserver's self-generated serving cert bundles its own CA: verify against it.
                    "cluster": {
                        "server": self.url,
                        "certificate-authority": str(self.workdir / "certs" / "apiserver.crt"),
                    },
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": "kubevec-test", "context": {"cluster": "kubevec-test", "user": user}}],
            "current-context": "kubevec-test",
        }
        path.write_text(json.dumps(config, indent=2))


def _insecure_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


@atexit.register
def _stop_all() -> None:
    for plane in list(_live):
        plane.stop()


@contextlib.contextmanager
def running(
    *,
    workdir: Path | None = None,
    bin_dir: Path | None = None,
    quiet: bool = False,
    controllers: Sequence[str] | None = None,
) -> Iterator[ControlPlane]:
    """Start a control plane in a temporary directory and stop it (and remove the directory) after.

    ``controllers=()`` starts no kube-controller-manager: nothing in the cluster changes by itself.
    """
    bin_dir = bin_dir or build_binaries(quiet=quiet)
    owned = workdir is None
    workdir = workdir or Path(tempfile.mkdtemp(prefix="kubevec-cp-"))
    plane = ControlPlane(bin_dir=bin_dir, workdir=workdir)
    if controllers is not None:
        plane.controllers = tuple(controllers)
    # SIGTERM (e.g. CI timeouts) must unwind through the finally below, not kill us outright.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        plane.start()
        yield plane
    finally:
        plane.stop()
        signal.signal(signal.SIGTERM, previous)
        if owned:
            shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    """``python -m tests.controlplane.cluster``: start a control plane and keep it up until Ctrl-C."""
    with running() as plane:
        print(f"Started control plane url={plane.url}")
        print(f"export KUBECONFIG={plane.kubeconfig}")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    main()
