"""Logging as a process sets it up: ``install`` in a fresh interpreter, its root handler writing JSON."""

from __future__ import annotations


def test_json_logs_are_one_object_per_line_with_kopf_object_references() -> None:
    """Through the real ``install``, in a fresh interpreter: the root handler writes JSON."""
    import json
    import subprocess
    import sys

    code = (
        "import logging; from kubevec.controller.runtime.logs import install; install(level='INFO', format='json'); "
        "logging.getLogger('kopf.objects').info('Handler %s succeeded.', 'observe_instance'); "
        "logging.getLogger('kopf.objects').warning('Bad object', extra={'k8s_ref': {'name': 'web'}}); "
        "logging.getLogger('kubevec').info('Upserted documents collection=%s count=%d', 'instances', 64)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in proc.stderr.splitlines()]
    assert [(line["level"], line["logger"], line["message"]) for line in lines] == [
        ("WARNING", "kopf.objects", "Bad object"),
        ("INFO", "kubevec", "Upserted documents collection=instances count=64"),
    ]
    assert lines[0]["k8s_ref"] == {"name": "web"}
    assert all("time" in line for line in lines)
