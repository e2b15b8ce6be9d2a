"""Who the resident reader answers, and that a command runs in its own process whenever it cannot.

The reader itself, with real processes and a real store: tests/integration/test_cli_resident.py.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kubevec.controller.cli import resident


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["search", "postgres"], "search"),
        (["--kubeconfig", "k", "--context", "c", "get", "x"], "get"),
        (["--kubeconfig=k", "related", "x"], "related"),
        (["--version"], None),
        (["-h"], None),
        ([], None),
        (["--kubeconfig"], None),
    ],
)
def test_the_command_is_found_past_the_global_flags(argv: list[str], command: str | None) -> None:
    assert resident.command_of(argv) == command


def test_only_reading_commands_are_handed_over() -> None:
    assert {"search", "get", "resolve", "related", "facets", "changes"} == resident.COMMANDS
    assert not {"run", "index", "migrate", "mcp", "status", "clusters", "bench"} & resident.COMMANDS


@pytest.mark.parametrize(("value", "expected"), [(None, 300), ("0", 0), ("45", 45), ("-3", 0), ("soon", 0)])
def test_the_idle_timeout_and_what_turns_it_off(value: str | None, expected: int) -> None:
    environ = {} if value is None else {resident.SECONDS_VARIABLE: value}
    assert resident.seconds(environ) == expected


def test_the_key_changes_with_what_changes_an_answer_and_nothing_else() -> None:
    base = {"KUBEVEC_STORE__PATH": "/s", "HOME": "/h", "TERM": "xterm", "SHLVL": "1", "_": "/usr/bin/kubevec"}
    key = resident.key(base, cwd="/w")
    assert resident.key({**base, "TERM": "dumb", "SHLVL": "2", "OLDPWD": "/x"}, cwd="/w") == key
    for changed in (
        {"KUBEVEC_STORE__PATH": "/other"},
        {"KUBEVEC_EMBEDDER__API_KEY": "k"},
        {"KUBECONFIG": "/k"},
        {"HOME": "/elsewhere"},
        {"HTTPS_PROXY": "http://proxy:3128"},
        {"XDG_CACHE_HOME": "/c"},
    ):
        assert resident.key({**base, **changed}, cwd="/w") != key, changed
    assert resident.key(base, cwd="/elsewhere") != key  # a relative store path means another store


def test_the_socket_directory_must_be_this_users_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    directory = resident.place()
    assert directory == tmp_path / f"kubevec-{os.getuid()}"
    assert directory.stat().st_mode & 0o777 == 0o700
    directory.chmod(0o770)  # somebody else could plant a socket in it
    assert resident.place() is None
    directory.rmdir()
    (tmp_path / f"kubevec-{os.getuid()}").symlink_to(tmp_path)
    assert resident.place() is None


def test_a_long_socket_path_runs_the_command_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    monkeypatch.setenv(resident.SECONDS_VARIABLE, "60")
    assert resident.ask(["search", "x"]) is None


@pytest.fixture
def sockets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The reader on, and this user's socket directory in a runtime directory of the test's own."""
    runtime = Path(tempfile.mkdtemp(prefix="kv-", dir="/tmp"))  # short: a socket's path has at most 104 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv(resident.SECONDS_VARIABLE, "60")
    monkeypatch.chdir(tmp_path)
    directory = resident.place()
    assert directory is not None
    yield directory
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def reader(sockets: Path) -> Iterator[Callable[[object], None]]:
    """A socket where the reader for this test's settings would be; ``reader(answer)`` answers one call so."""
    directory = sockets
    path = resident.paths(directory, resident.key(os.environ, cwd=os.getcwd()))[0]
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    threads: list[threading.Thread] = []

    def answer_once(answer: object) -> None:
        def serve() -> None:
            connection, _ = server.accept()
            with connection:
                assert resident.receive(connection)["argv"] == ["search", "x"]
                if answer is not None:  # None: a reader that dies mid-call
                    connection.sendall(resident.encode(answer))

        threads.append(threading.Thread(target=serve, daemon=True))
        threads[-1].start()

    yield answer_once
    for thread in threads:
        thread.join(timeout=5)
    server.close()


def test_what_the_reader_answers_is_printed_with_its_exit_code(
    reader: Callable[[object], None], capsys: pytest.CaptureFixture[str]
) -> None:
    reader({"code": 3, "stdout": "out\n", "stderr": "err\n"})
    assert resident.ask(["search", "x"]) == 3
    assert capsys.readouterr() == ("out\n", "err\n")


@pytest.mark.parametrize("answer", [{"fallback": "not the same settings"}, None, {"code": "0"}, [1]])
def test_a_refusal_a_dead_reader_or_nonsense_runs_the_command_here(
    reader: Callable[[object], None], answer: object, capsys: pytest.CaptureFixture[str]
) -> None:
    reader(answer)
    assert resident.ask(["search", "x"]) is None
    assert capsys.readouterr() == ("", "")


def test_no_reader_and_a_command_that_does_not_read_run_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv(resident.SECONDS_VARIABLE, "60")
    assert resident.ask(["search", "x"]) is None  # no socket
    assert resident.ask(["index", "crds", "x"]) is None
    monkeypatch.setenv(resident.SECONDS_VARIABLE, "0")
    assert resident.ask(["search", "x"]) is None


@pytest.mark.parametrize(
    ("living", "started"), [(0, True), (resident.MAX_READERS - 1, True), (resident.MAX_READERS, False)]
)
def test_a_reader_is_started_unless_this_user_has_enough(
    sockets: Path, monkeypatch: pytest.MonkeyPatch, living: int, started: bool
) -> None:
    import fcntl

    directory = sockets
    held = []
    for number in range(living):  # readers of other settings, alive (they hold their locks)
        handle = open(directory / f"cli-other{number}.lock", "a")  # noqa: SIM115 - held until the test ends
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.append(handle)
    (directory / "cli-dead.lock").touch()  # a reader that exited: not counted
    spawned: list[list[str]] = []
    monkeypatch.setattr(resident.subprocess, "Popen", lambda argv, **_: spawned.append(argv))
    resident.start(["search", "x"])
    assert bool(spawned) == started
    if started:
        assert spawned[0][1:3] == ["-m", "kubevec.controller.cli.resident_server"]
    for handle in held:
        handle.close()
