"""The audit trail (issue 53): one record per tool call, in the log (a line, and fields for JSON pipelines)
and as a span event; the question's words only when asked for; failures recorded with their reason."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from kubevec.controller.runtime.logs import formatter
from kubevec.core.errors import SearchError
from kubevec.query.audit import AuditTrail
from kubevec.query.limits import Caller
from kubevec.query.request import SearchRequest
from kubevec.query.views import everything
from tests.unit.tenants import index

AGENT = everything(Caller("user", "oidc:alice"))


async def trail(**kwargs: Any) -> tuple[Any, list[tuple[str, Mapping[str, Any]]]]:
    service, _ = await index()
    events: list[tuple[str, Mapping[str, Any]]] = []
    service.audit = AuditTrail(span_event=lambda name, attributes: events.append((name, attributes)), **kwargs)
    return service, events


def audited(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [record.audit for record in caplog.records if record.name == "kubevec.audit"]  # type: ignore[attr-defined]


async def test_each_tool_call_leaves_one_record_with_who_what_and_how_many(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kubevec.audit")
    service, events = await trail()
    scoped = service.scoped(AGENT)
    answer = await scoped.search(SearchRequest.build(collection="instances", query="the api", kind="Deployment", k=3))
    await scoped.facets("instances", "namespace")
    first, second = audited(caplog)
    assert first["caller_kind"] == "user"
    assert first["caller"] == "oidc:alice"
    assert first["tool"] == "vector_search"
    assert first["results"] == len(answer)
    assert first["outcome"] in ("answered", "degraded")
    assert first["arguments"]["collection"] == "instances"
    assert "query" not in first["arguments"]  # the question's words: off by default
    assert first["ms"] >= 0
    assert second["tool"] == "list_facets"
    assert second["arguments"]["field"] == "namespace"
    assert [name for name, _ in events] == ["kubevec.audit", "kubevec.audit"]
    assert events[0][1]["kubevec.audit.tool"] == "vector_search"
    line = next(record for record in caplog.records if record.name == "kubevec.audit").getMessage()
    assert line.startswith("Audited a tool call tool=vector_search caller=user:oidc:alice results=")


async def test_the_questions_words_when_asked_for_and_judged_like_any_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kubevec.audit")
    service, _ = await trail(queries=True)
    question = "which api uses password hunter2Qz7maple"
    await service.scoped(AGENT).search(SearchRequest.build(collection="instances", query=question, k=3))
    (record,) = audited(caplog)
    assert record["arguments"]["query"].startswith("which api uses password")
    assert "hunter2Qz7maple" not in record["arguments"]["query"]


async def test_a_failed_call_is_recorded_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kubevec.audit")
    service, _ = await trail()
    with pytest.raises(SearchError):
        await service.scoped(AGENT).call("list_facets", collection="instances", field="kind", cluster="c" * 300)
    (record,) = audited(caplog)
    assert record["outcome"] == "error"
    assert record["reason"].startswith("SearchError: cluster")
    assert record["results"] is None


async def test_json_logs_carry_the_record_as_fields(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kubevec.audit")
    service, _ = await trail()
    await service.scoped(AGENT).facets("instances", "kind")
    (entry,) = [r for r in caplog.records if r.name == "kubevec.audit"]
    document = json.loads(formatter("json").format(entry))
    assert document["audit"]["tool"] == "list_facets"
    assert document["audit"]["caller"] == "oidc:alice"
    assert document["logger"] == "kubevec.audit"


async def test_without_a_trail_nothing_is_recorded(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kubevec.audit")
    service, _ = await index()
    await service.scoped(AGENT).facets("instances", "kind")
    assert audited(caplog) == []
