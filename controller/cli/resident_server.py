"""The resident reader's process: one warm search service answering reading commands over a Unix socket.

Started by :func:`kubevec.controller.cli.resident.start` as
``python -m kubevec.controller.cli.resident_server SOCKET LOCK KEY`` with the caller's environment and
working directory. It holds ``LOCK`` for as long as it lives (a second one started at the same time
exits at once), loads the settings, opens the store as a following reader, warms the model and the
lexical index, and then runs each caller's arguments through the same parser, handlers and error
mapping as a command in its own process, one at a time, its output captured and sent back. It exits
after ``KUBEVEC_CLI_RESIDENT_SECONDS`` without a call, or when an embedded store's directory is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import inspect
import io
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kubevec.controller.cli import resident
from kubevec.controller.cli.main import failed, load_settings
from kubevec.core.errors import KubevecError

if TYPE_CHECKING:
    from kubevec.controller.settings import Settings
    from kubevec.query.search import SearchService

#: The reader's own record (its log file, at INFO whatever the level of the commands' logs): when it
#: started, what it answered, why it stopped.
logger = logging.getLogger("kubevec.resident")

#: How often the idle reader looks at the clock and at its store.
_TICK: Final = 2.0
#: A caller that connects and then sends nothing (or half a request) is dropped after this long.
_READ_SECONDS: Final = 10.0
#: The largest request read (arguments as JSON); a larger one is dropped unread.
_REQUEST_MAX_BYTES: Final = 1 << 20


def main(argv: Sequence[str]) -> int:
    socket_path, lock_path, identity = (Path(argv[0]), Path(argv[1]), argv[2])
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another reader for these settings lives (or is starting)
        settings = load_settings(kubeconfig=None, context=None)
        if isinstance(settings, int):
            return settings
        from kubevec.controller.runtime.logs import formatter, install

        install(level=settings.log_level, format=settings.log_format)
        journal = logging.StreamHandler(sys.stderr)
        journal.setFormatter(formatter(settings.log_format))
        logger.addHandler(journal)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        if identity != resident.key_here():
            logger.warning("Resident reader refused: its environment is not the caller's")
            return 1
        if settings.store.sharing != "shared":  # it would hold the store and every writer would fail
            logger.warning(
                "Resident reader refused: the %s store opens in one process at a time", settings.store.backend
            )
            return 1
        try:
            asyncio.run(Reader(settings=settings, identity=identity).serve(socket_path))
        except KubevecError as exc:  # the store went between the call that started us and now
            logger.warning("Resident reader could not start error=%s", exc.first_line())
            return 1
    return 0


class Reader:
    """The warm service, the socket, and the clock that ends them."""

    def __init__(self, *, settings: Settings, identity: str) -> None:
        self._settings = settings
        self._identity = identity
        self._idle = settings.cli_resident_seconds
        self._stop = asyncio.Event()
        self._last = time.monotonic()
        self._turn = asyncio.Lock()
        self._service: SearchService | None = None

    async def serve(self, socket_path: Path) -> None:
        from kubevec.controller.cli.common import RESIDENT, open_store, search_service

        store = open_store(self._settings, existing=True, follow=True)
        service = search_service(self._settings, store, embedder=True, one_shot=False)
        self._service = service
        RESIDENT.set(service)  # the handlers' tasks copy this context: every reading command gets it
        with contextlib.suppress(FileNotFoundError):
            os.unlink(socket_path)  # a reader that died left it; we hold the lock, so none lives
        server = await asyncio.start_unix_server(self._answer, path=str(socket_path))
        os.chmod(socket_path, 0o600)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self._stop.set)
        logger.info("Resident reader ready idle_seconds=%d", self._idle)
        try:
            await self._warm(service)
            while time.monotonic() - self._last < self._idle and self._store_is_there():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), _TICK)
                    break
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(socket_path)
            await store.close()
            logger.info("Resident reader stopped")

    def _store_is_there(self) -> bool:
        local = self._settings.store.local_path
        return local is None or Path(local).exists()

    async def _warm(self, service: SearchService) -> None:
        """Load the model, the store's index and the lexical index now, not at the first caller's query."""
        from kubevec.query.request import SearchRequest

        async with self._turn:
            try:
                await service.warm()
            except KubevecError as exc:
                logger.info("Resident reader left warming to the first query error=%s", exc.first_line())
                return
            for collection in ("instances", "capabilities"):  # the first one the store holds loads the model
                try:
                    await service.search(SearchRequest.build(query="warm up", collection=collection, k=1))
                    return
                except KubevecError as exc:
                    logger.info("Resident reader could not warm collection=%s error=%s", collection, exc.first_line())

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            header = await asyncio.wait_for(reader.readexactly(resident.FRAME.size), _READ_SECONDS)
            size = resident.FRAME.unpack(header)[0]
            if size > _REQUEST_MAX_BYTES:  # a command line is a few hundred bytes
                raise ValueError(f"a request of {size} bytes")
            request = resident.decode(await asyncio.wait_for(reader.readexactly(size), _READ_SECONDS))
            if isinstance(request, dict) and request.get("stop") is True:  # kubevec resident stop
                answer: dict[str, Any] = {"stopped": True}
                self._stop.set()
            elif not isinstance(request, dict) or request.get("key") != self._identity:
                answer = {"fallback": "not the same settings"}
            elif not self._store_is_there():  # deleted: the caller says so in its own words, and we go
                answer = {"fallback": "the store is gone"}
                self._stop.set()
            else:
                async with self._turn:
                    if self._service is not None:  # nothing one caller's command learnt shapes the next one's answer
                        self._service.begin_call()
                    started = time.monotonic()
                    answer = await self._run([str(word) for word in request.get("argv", [])])
                    self._last = time.monotonic()
                logger.info("Answered a command code=%s seconds=%.3f", answer.get("code", "-"), self._last - started)
            writer.write(resident.encode(answer))
            await writer.drain()
        except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
            logger.info("Resident reader lost a caller error=%s", exc)
        finally:
            writer.close()

    async def _run(self, argv: list[str]) -> dict[str, Any]:
        """What the command prints and its exit code, as ``kubevec`` in its own process would give them."""
        from kubevec.controller.cli.parser import build_parser

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _logging_to(err):
            code = await self._command(build_parser(), argv)
        if code is None:
            return {"fallback": "not a reading command"}
        return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}

    async def _command(self, parser: Any, argv: list[str]) -> int | None:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, or a usage error argparse printed
            return exc.code if isinstance(exc.code, int) else 2
        if args.command not in resident.COMMANDS:
            return None
        settings = load_settings(kubeconfig=args.kubeconfig, context=args.context, base=self._settings)
        if isinstance(settings, int):
            return settings
        try:
            outcome = args.handler(args, settings)
            code: int = await outcome if inspect.iscoroutine(outcome) else outcome
            return code
        except KubevecError as exc:
            return failed(args, exc)
        except Exception:  # a bug: its traceback, as the command in its own process would print it
            traceback.print_exc()
            return 1


@contextlib.contextmanager
def _logging_to(stream: io.StringIO) -> Iterator[None]:
    """What a command logs goes to its caller's stderr, as it would from a process of its own."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    previous = [handler.stream for handler in handlers]
    for handler in handlers:
        handler.setStream(stream)
    try:
        yield
    finally:
        for handler, old in zip(handlers, previous, strict=True):
            handler.setStream(old)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
