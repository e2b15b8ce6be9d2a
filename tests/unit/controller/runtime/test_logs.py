"""The repeat filter: identical warnings once per interval, with a count; INFO untouched."""

from __future__ import annotations

import logging

from kubevec.controller.runtime.logs import RepeatFilter


def record(message: str, *args: object, level: int = logging.ERROR, name: str = "kopf") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, args, None)


def test_repeats_are_held_back_then_counted() -> None:
    now = [0.0]
    repeat = RepeatFilter(interval=60, clock=lambda: now[0])
    assert repeat.filter(record("Request attempt #%d/6 failed; will retry", 1))
    for attempt in range(2, 42):
        now[0] += 1
        assert not repeat.filter(record("Request attempt #%d/6 failed; will retry", attempt % 6))
    assert repeat.filter(record("A different problem"))
    now[0] += 30
    again = record("Request attempt #%d/6 failed; will retry", 3)
    assert repeat.filter(again)
    assert again.getMessage() == "Request attempt #3/6 failed; will retry (+40 similar in 60s)"
    assert repeat.filter(record("Handler succeeded", level=logging.INFO))
    assert repeat.filter(record("Handler succeeded", level=logging.INFO))


def test_lines_that_differ_only_in_urls_are_similar() -> None:
    repeat = RepeatFilter(interval=60, clock=lambda: 0.0)
    line = "Request attempt #%d/6 failed; will retry: GET https://127.0.0.1:%d/apis/%s?watch=true -> refused"
    assert repeat.filter(record(line, 1, 6443, "apps/v1/deployments"))
    assert not repeat.filter(record(line, 2, 6443, "batch/v1/jobs"))


def test_loggers_and_levels_are_kept_apart() -> None:
    repeat = RepeatFilter(interval=60, clock=lambda: 0.0)
    assert repeat.filter(record("Store down", name="kubevec.controller.sync.engine"))
    assert repeat.filter(record("Store down", name="kubevec.controller.app"))
    assert repeat.filter(record("Store down", name="kubevec.controller.app", level=logging.WARNING))
    assert not repeat.filter(record("Store down", name="kubevec.controller.app"))


def test_watch_restarts_after_410_are_one_info_line_per_interval() -> None:
    from kubevec.controller.runtime.logs import WatchRestartFilter

    now = [0.0]
    lift = WatchRestartFilter(level=logging.INFO, interval=60, clock=lambda: now[0])
    first = record("Restarting the watch-stream for configmaps.v1 cluster-wide.", level=logging.DEBUG)
    assert lift.filter(first)
    assert first.levelno == logging.INFO
    assert first.getMessage() == (
        "Restarted a watch after 410 Gone (resource version compacted) resource=configmaps.v1 cluster-wide"
    )
    for _ in range(5):
        now[0] += 1
        assert not lift.filter(record("Restarting the watch-stream for pods.v1 cluster-wide.", level=logging.DEBUG))
    now[0] += 60
    later = record("Restarting the watch-stream for pods.v1 cluster-wide.", level=logging.DEBUG)
    assert lift.filter(later)
    assert later.getMessage().endswith("(and 5 more in 60s)")
    assert not lift.filter(record("Other debug chatter", level=logging.DEBUG))
    assert lift.filter(record("A real warning", level=logging.WARNING))


def test_handler_success_lines_are_debug_and_failures_keep_their_level() -> None:
    from kubevec.controller.runtime.logs import HandlerSuccessFilter

    def record(level: int, message: str) -> logging.LogRecord:
        return logging.LogRecord("kopf.objects", level, __file__, 1, message, None, None)

    at_info, at_debug = HandlerSuccessFilter(level=logging.INFO), HandlerSuccessFilter(level=logging.DEBUG)
    assert not at_info.filter(record(logging.INFO, "Handler 'observe_instance' succeeded."))
    assert at_debug.filter(record(logging.INFO, "Handler 'observe_instance' succeeded."))
    assert at_info.filter(record(logging.ERROR, "Handler 'observe_instance' failed with an exception."))
    assert at_info.filter(record(logging.INFO, "Resync finished"))


def test_a_huge_message_is_clipped_with_a_count() -> None:
    """A caller's 1 MB JSON-RPC id or query was logged as one 1 MB line."""
    from kubevec.controller.runtime.logs import ClipFilter

    record = logging.LogRecord("mcp", logging.WARNING, __file__, 1, "Bad request id=%s", ("x" * 1_000_000,), None)
    assert ClipFilter(limit=100).filter(record)
    message = record.getMessage()
    assert len(message) < 150
    assert message.endswith(f"...(+{1_000_000 + len('Bad request id=') - 100} chars)")
    short = logging.LogRecord("mcp", logging.INFO, __file__, 1, "Upserted documents count=%d", (3,), None)
    ClipFilter(limit=100).filter(short)
    assert short.getMessage() == "Upserted documents count=3"


def test_a_credential_in_a_message_never_reaches_the_log_line() -> None:
    """issue 34: redaction covered documents only; an error quoting a field value logged it as it was."""
    from kubevec.controller.runtime.logs import ClipFilter

    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Kd3Lm2P"
    record = logging.LogRecord(
        "kubevec",
        logging.WARNING,
        __file__,
        1,
        "Skipped an object error=%s",
        (f"bad value {secret!r} at spec.s3",),
        None,
    )
    assert ClipFilter().filter(record)
    assert secret not in record.getMessage()
    assert record.getMessage().startswith("Skipped an object error=bad value ")
    kept = "Upserted documents collection=instances count=64 id=prod/shop/apps/v1/Deployment/web-7d4f8b9c6"
    plain = logging.LogRecord("kubevec", logging.INFO, __file__, 1, kept, None, None)
    ClipFilter().filter(plain)
    assert plain.getMessage() == kept


def test_json_logs_serialise_kopf_object_loggers_records() -> None:
    """kopf's object loggers pass their OperatorSettings with every record: 98 '--- Logging error ---'
    blocks in one run at DEBUG before they were left out."""
    import io
    import json

    import kopf

    from kubevec.controller.runtime.logs import formatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter("json"))
    handler.handleError = lambda record: (_ for _ in ()).throw(AssertionError("logging failed"))  # type: ignore[method-assign]
    target = logging.getLogger("kopf.objects.test-json")
    target.addHandler(handler)
    target.setLevel(logging.DEBUG)
    target.propagate = False
    try:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop", "uid": "u"}}
        objects = kopf.LocalObjectLogger(body=body, settings=kopf.OperatorSettings())
        objects.logger = target
        objects.debug("Handler 'observe_instance' succeeded.")
        target.info("with an odd extra", extra={"thing": object()})
    finally:
        target.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines[0]["message"] == "Handler 'observe_instance' succeeded."
    assert lines[0]["k8s_ref"]["name"] == "web"
    assert "settings" not in lines[0]
    assert lines[1]["thing"] == "<object>"


def test_http_client_internals_stay_quiet_at_debug() -> None:
    """httpcore logs response headers whole at DEBUG (a server may echo a key in one)."""
    from kubevec.controller.runtime.logs import install

    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    try:
        install(level="DEBUG")
        for name in ("httpcore", "httpcore.http11", "httpx"):
            assert logging.getLogger(name).getEffectiveLevel() >= logging.WARNING, name
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]


def test_mcp_answers_never_reach_a_debug_log() -> None:
    """issue 52: with an agent reading, 43 of 44 leaked values reached the controller's DEBUG log: sse-starlette
    logs each chunk of every MCP answer (every caller's, mixed together) at DEBUG."""
    from kubevec.controller.runtime.logs import install

    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    try:
        install(level="DEBUG")
        root.setLevel(logging.DEBUG)  # basicConfig leaves a configured root alone (pytest's): as a real run has it
        for name in ("sse_starlette.sse", "mcp.server.streamable_http", "mcp.shared.jsonrpc_dispatcher"):
            assert not logging.getLogger(name).isEnabledFor(logging.DEBUG), name
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
