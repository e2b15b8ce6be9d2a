"""The MCP tools' one list and their one error mapping."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from kubevec.core.errors import BackendUnavailable, EmbedderError, SearchError
from kubevec.query.mcp.tools import TOOL_FUNCTIONS, tool_errors
from kubevec.query.request import TOOLS


def test_the_served_tools_are_the_ones_the_controller_names() -> None:
    assert tuple(tool.__name__ for tool in TOOL_FUNCTIONS) == TOOLS


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
