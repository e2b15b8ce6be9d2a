"""The unit tier is hermetic: no network socket and no process. A test that needs either (a loopback
stand-in of a model server, the CLI as a subprocess) belongs in ``tests/integration``; this guard makes
one that forgets fail with that sentence instead of slowing the tier down unseen."""

from __future__ import annotations

import socket
import subprocess
from typing import Any

import pytest

NETWORK = (socket.AF_INET, socket.AF_INET6)
ADVICE = "the unit tier opens no network socket and starts no process: move this test to tests/integration"


class NotHermetic(AssertionError):
    """A unit test reached for the network or a process."""


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch: pytest.MonkeyPatch) -> None:
    def guarded(name: str) -> Any:
        real = getattr(socket.socket, name)

        def call(self: socket.socket, *args: Any) -> Any:
            if self.family in NETWORK:
                raise NotHermetic(f"socket.{name}{args}: {ADVICE}")
            return real(self, *args)

        return call

    for name in ("connect", "connect_ex", "bind"):
        monkeypatch.setattr(socket.socket, name, guarded(name))

    def no_process(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        raise NotHermetic(f"subprocess {args[0] if args else kwargs.get('args')!r}: {ADVICE}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)


def test_the_guard_refuses_a_network_socket_and_a_process() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(NotHermetic):
        sock.bind(("127.0.0.1", 0))
    with pytest.raises(NotHermetic):
        subprocess.run(["true"], check=False)
    left, right = socket.socketpair()  # what an event loop uses to wake itself: allowed
    left.close()
    right.close()
