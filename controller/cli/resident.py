"""A warm process behind the reading commands: the second ``kubevec search`` does not start from cold.

A new ``kubevec search`` process spends about 1.3 s before it answers on a 2-core machine: importing
chromadb alone takes 0.7 s, then kubevec, the model and the store's index; the search itself takes
tens of milliseconds. Agents call the command line many times in a row, each a new process. So,
like ``dmypy`` or Gradle's daemon, the first reading command (``search``, ``get``, ``resolve``,
``related``, ``facets``, ``changes``) that succeeds starts a resident reader in the background, and
the next ones hand it their arguments over a Unix socket and print what it answers, with the same
exit code (~0.1 s). It is started only for a store other processes may open beside it (not Qdrant's
local mode, which locks its folder: the reader would make every writer fail; not the memory
store), and it takes no lock a writer needs. It answers only callers with the same settings: the socket's name is a hash of
the working directory, the Python and kubevec installation, and every environment variable that
can change an answer (``KUBEVEC_*``, ``KUBECONFIG``, ``HOME``, ``XDG_*``, proxies, CA bundles...),
and the reader checks the hash again on every call; at most :data:`MAX_READERS` live at once. It
follows what the controller writes to an embedded store (``follow=True``), and exits after
``KUBEVEC_CLI_RESIDENT_SECONDS`` (default 300) without a call or when its store directory is gone.
``KUBEVEC_CLI_RESIDENT_SECONDS=0`` turns it off; then every command runs in its own process.
``kubevec resident stop`` stops this user's readers now.

The socket lives in ``$XDG_RUNTIME_DIR/kubevec-<uid>`` (else the temporary directory), a directory
only its owner can enter, which is checked before every use. If anything about the resident reader
fails (no socket, a refused connection, a different hash, a reader that died mid-call), the command
runs in its own process as before: the resident reader can make a command faster, never different.

This module imports only the standard library: it runs before the command line parses anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import argparse

    from kubevec.controller.cli.common import Commands

#: The commands a resident reader answers: they read the store and nothing else.
COMMANDS: Final = frozenset({"search", "get", "resolve", "related", "facets", "changes"})
#: Seconds without a call after which the resident reader exits; 0 turns it off.
SECONDS_VARIABLE: Final = "KUBEVEC_CLI_RESIDENT_SECONDS"
DEFAULT_SECONDS: Final = 300
#: Readers one user may have at once (each holds a model and an index: ~300 MiB with the offline model).
MAX_READERS: Final = 4
_LOG_MAX_BYTES: Final = 1 << 20
#: How long a caller waits for an answer before it runs the command itself.
ANSWER_TIMEOUT: Final = 120.0
_CONNECT_TIMEOUT: Final = 1.0
#: The longest path a Unix socket may have (sun_path: 108 bytes on Linux, 104 on macOS and BSD).
_SOCKET_PATH_MAX: Final = 104
_GLOBAL_FLAGS: Final = ("--kubeconfig", "--context")
#: Environment variables that can change what a command answers (besides every KUBEVEC_ one).
_ENVIRONMENT: Final = ("KUBECONFIG", "HOME", "LANG", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NO_PROXY")
_ENVIRONMENT_PREFIXES: Final = ("KUBEVEC_", "XDG_", "HF_", "OMP_", "ORT_", "OTEL_", "AWS_", "GOOGLE_", "SSL_", "LC_")
#: A message on the socket: its length (4 bytes, big-endian), then JSON.
FRAME: Final = struct.Struct(">I")


def seconds(environ: Mapping[str, str]) -> int:
    """The idle timeout the environment asks for; 0 (off) for a value that is not a whole number >= 0."""
    raw = environ.get(SECONDS_VARIABLE)
    if raw is None:
        return DEFAULT_SECONDS
    try:
        return max(0, int(raw))
    except ValueError:
        return 0  # the settings report the bad value when the command runs here


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, past the global flags that may come before it; None if none."""
    position = 0
    while position < len(argv):
        word = argv[position]
        if word in _GLOBAL_FLAGS:
            position += 2
        elif word.startswith(tuple(f"{flag}=" for flag in _GLOBAL_FLAGS)):
            position += 1
        else:
            return None if word.startswith("-") else word
    return None


def key(environ: Mapping[str, str], *, cwd: str) -> str:
    """What makes two callers' answers the same: working directory, installation, relevant environment."""
    here = os.stat(__file__)
    relevant = {  # by upper-cased name: the settings read kubevec_store__path as KUBEVEC_STORE__PATH
        name: value
        for name, value in environ.items()
        if name.upper().startswith(_ENVIRONMENT_PREFIXES)
        or name.upper() in _ENVIRONMENT
        or name.lower().endswith("_proxy")
    }
    identity = {
        "cwd": cwd,
        "python": sys.executable,
        "code": [__file__, here.st_mtime_ns, here.st_size],
        "environment": sorted(relevant.items()),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def key_here() -> str:
    """This process's :func:`key`: what a resident reader compares with its callers'."""
    return key(os.environ, cwd=os.getcwd())


def place() -> Path | None:
    """The directory of this user's sockets, made if missing; None if it is not this user's alone."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    directory = Path(base) / f"kubevec-{os.getuid()}"
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        found = os.lstat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        return None
    return directory


def paths(directory: Path, identity: str) -> tuple[Path, Path, Path]:
    """The socket, the lock its reader holds while it lives, and its log."""
    stem = directory / f"cli-{identity[:24]}"
    return stem.with_suffix(".sock"), stem.with_suffix(".lock"), stem.with_suffix(".log")


def _eligible(argv: Sequence[str]) -> tuple[Path, Path, Path, str] | None:
    if os.name != "posix" or not hasattr(socket, "AF_UNIX") or command_of(argv) not in COMMANDS:
        return None
    if seconds(os.environ) == 0:
        return None
    directory = place()
    if directory is None:
        return None
    identity = key_here()
    found = paths(directory, identity)
    if len(os.fsencode(found[0])) >= _SOCKET_PATH_MAX:  # bind() would refuse it
        return None
    return (*found, identity)


def ask(argv: Sequence[str]) -> int | None:
    """The exit code of ``argv`` as the resident reader ran it, its output printed; None: run it here."""
    found = _eligible(argv)
    if found is None:
        return None
    path, _, _, identity = found
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(_CONNECT_TIMEOUT)
            connection.connect(str(path))
            connection.settimeout(ANSWER_TIMEOUT)
            send(connection, {"argv": list(argv), "key": identity})
            answer = receive(connection)
    except (OSError, ValueError):  # none running, one that died, a timeout: this process answers
        return None
    except KeyboardInterrupt:  # Ctrl-C while it answers: as a command of its own would end
        return 130
    if not isinstance(answer, dict) or not isinstance(answer.get("code"), int):
        return None
    try:
        sys.stdout.write(str(answer.get("stdout", "")))
        sys.stdout.flush()
    except BrokenPipeError:  # `kubevec search ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    sys.stderr.write(str(answer.get("stderr", "")))
    sys.stderr.flush()
    code: int = answer["code"]
    return code


def start(argv: Sequence[str]) -> None:
    """Start a resident reader for these settings in the background, unless one runs (or starts) already."""
    found = _eligible(argv)
    if found is None:
        return
    path, lock, log, identity = found
    if held(lock):
        return
    if sum(held(other) for other in lock.parent.glob("cli-*.lock")) >= MAX_READERS:
        return  # callers whose settings change on every call must not fill the memory with readers
    try:
        if log.exists() and log.stat().st_size > _LOG_MAX_BYTES:
            log.unlink()
        with open(log, "ab") as output:
            subprocess.Popen(  # this Python, this package, arguments of our own
                [sys.executable, "-m", "kubevec.controller.cli.resident_server", str(path), str(lock), identity],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # not killed with the caller's terminal or process group
                close_fds=True,  # nor holding the caller's pipes open: `subprocess.run(capture_output=True)` returns
            )
    except OSError:
        return


def held(lock: Path) -> bool:
    """Whether a resident reader holds ``lock`` (it does for as long as it lives)."""
    import fcntl

    try:
        with open(lock, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:
        return True  # cannot tell: do not start another
    return False


def encode(message: Any) -> bytes:
    payload = json.dumps(message).encode()
    return FRAME.pack(len(payload)) + payload


def decode(payload: bytes) -> Any:
    """A message's JSON; ValueError if it is not JSON."""
    return json.loads(payload)


def send(connection: socket.socket, message: Any) -> None:
    connection.sendall(encode(message))


def receive(connection: socket.socket) -> Any:
    """One length-prefixed JSON message; ValueError for a short or malformed one."""
    header = _exactly(connection, FRAME.size)
    return decode(_exactly(connection, FRAME.unpack(header)[0]))


def _exactly(connection: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = connection.recv(min(size, 1 << 20))
        if not chunk:
            raise ValueError("the connection closed mid-message")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def register(commands: Commands) -> None:
    resident = commands.add("resident", None, help="the warm readers behind the reading commands")
    nested = commands.nested(resident, dest="what", required=True)
    nested.add("stop", stop_command, settings=False, help="stop this user's resident readers now")


def stop_command(args: argparse.Namespace, settings: object) -> int:
    """Ask every reader in this user's socket directory to stop (any of them: the directory is theirs alone)."""
    directory = place()
    stopped = 0
    for path in sorted(directory.glob("cli-*.sock")) if directory is not None else []:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.settimeout(_CONNECT_TIMEOUT)
                connection.connect(str(path))
                send(connection, {"stop": True})
                stopped += bool(isinstance(answer := receive(connection), dict) and answer.get("stopped"))
        except (OSError, ValueError):
            continue  # one that died and left its socket: nothing to stop
    print(f"Stopped resident readers count={stopped}")
    return 0
