"""The MCP tools' one list and their one error mapping."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from kubevec.backends.filters import Eq
from kubevec.controller.cli.common import RESIDENT
from kubevec.controller.cli.parser import build_parser
from kubevec.controller.runtime.metrics import MCP_TOOLS
from kubevec.core.errors import BackendUnavailable, EmbedderError, SearchError
from kubevec.query import tool_commands, tools
from kubevec.query.mcp import build_server
from kubevec.query.mcp.tools import TOOL_FUNCTIONS, tool_errors
from kubevec.query.sources import Sources
from kubevec.query.tools import Tool, ToolRequest
from kubevec.query.views import View
from tests.unit.tenants import index


def test_the_served_tools_are_the_ones_the_controller_names() -> None:
    assert tuple(tool.__name__ for tool in TOOL_FUNCTIONS) == MCP_TOOLS == tools.names()


def test_every_tool_is_a_command() -> None:
    commands = build_parser().subcommands
    assert {tool.command for tool in tools.TOOLS} <= set(commands)
    # What `kubevec --help` lists without importing the table is the table's commands, in its order.
    assert [(tool.command, tool.help) for tool in tools.TOOLS] == list(tool_commands.COMMANDS.items())


class CountRequest(ToolRequest):
    kind: Annotated[str, Field(description="The kind to count.")]
    namespace: Annotated[str | None, Field(description="Only this namespace.")] = None


async def count_kind(sources: Sources, request: CountRequest, view: View | None) -> dict[str, int]:
    name = await sources.name("instances")
    count = await sources.store.count(name, Eq("kind", request.kind))
    return {request.kind: count}


async def test_a_new_tool_is_its_request_its_reader_and_a_line_in_the_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two places: the request with its reader (here, above), and the table's line with its command's
    help line (here, the monkeypatches; the help line lives apart so `kubevec --help` imports no request).

    The MCP tool, the scoped reader, the metrics' names and the CLI command come from them.
    """
    new = Tool[CountRequest, dict[str, int]](
        name="count_kind", request=CountRequest, read=count_kind, command="count", help="count objects of a kind"
    )
    monkeypatch.setattr(tools, "TOOLS", (*tools.TOOLS, new))
    monkeypatch.setattr(tool_commands, "COMMANDS", {**tool_commands.COMMANDS, "count": new.help})
    service, _ = await index()

    assert "count_kind" in tools.names()  # what the controller's metrics label
    listed = {tool.name: tool for tool in await build_server(service.scoped).list_tools()}
    assert listed["count_kind"].description == "count objects of a kind"
    schema = listed["count_kind"].input_schema
    assert schema["required"] == ["kind"]
    assert schema["properties"]["namespace"]["description"] == "Only this namespace."
    answer = await service.scoped(None).call("count_kind", kind="Deployment")
    assert answer["Deployment"] > 0
    with pytest.raises(SearchError, match="kind: Field required"):
        await service.scoped(None).call("count_kind")

    parser = build_parser()  # and `kubevec count`, its flags from the request
    assert "count objects of a kind" in parser.format_help()
    assert "Only this namespace" in parser.subcommands["count"].format_help()
    args = parser.parse_args(["count", "--kind", "Deployment", "-o", "json"])
    resident = RESIDENT.set(service)  # the command reads through this service
    try:
        assert await args.handler(args, None) == 0
    finally:
        RESIDENT.reset(resident)
    assert json.loads(capsys.readouterr().out) == answer


@pytest.mark.parametrize(
    "error",
    [
        SearchError("k: at most 100\nsecond line"),
        BackendUnavailable("chroma at x failed: refused\ntraceback-ish detail"),
        EmbedderError("openai refused the key\nbody", reason="auth"),
    ],
)
async def test_a_kubevec_error_is_a_tool_error_of_its_first_line(error: Exception) -> None:
    @tool_errors
    async def failing() -> None:
        raise error

    with pytest.raises(ToolError) as raised:
        await failing()
    assert str(raised.value) == str(error).splitlines()[0]
    assert raised.value.__cause__ is error


async def test_anything_else_is_a_bug_and_keeps_its_type() -> None:
    @tool_errors
    async def failing() -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await failing()
