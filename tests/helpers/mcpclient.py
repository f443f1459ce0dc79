"""An MCP client for the tests: the SDK's own, over stdio, to a real `git-rewind mcp` process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .workdir import REWIND, Workdir

CLIENT = "test-client"


class Reply:
    """One tool result: its text, its structured content, whether it is an error."""

    def __init__(self, result: Any) -> None:
        self.error = bool(result.is_error)
        self.text = "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")
        self.data: dict[str, Any] = result.structured_content or {}


def session(w: Workdir, story: Callable[[Callable[..., Reply]], None], repo: Path | None = None,
            env: dict[str, str] | None = None) -> list[str]:
    """Start the server for W's repository and run STORY with a blocking `call(tool, **arguments)`.

    Returns the names of the tools the server lists, after checking each one and each of its
    arguments is described.
    """
    from anyio.from_thread import start_blocking_portal
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    params = StdioServerParameters(command=REWIND[0], args=[*REWIND[1:], "mcp", "--repo", str(repo or w.path)],
                                   env={**w.env, **(env or {})}, cwd=str(w.path))
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(stdio_client(params)) as streams, \
            portal.wrap_async_context_manager(ClientSession(
                *streams, client_info=Implementation(name=CLIENT, version="1"))) as client:
        init = portal.call(client.initialize)
        assert init.server_info.name == "git-rewind"
        listed = portal.call(client.list_tools)
        for tool in listed.tools:
            assert tool.description and tool.input_schema["type"] == "object", tool.name
            for name, prop in tool.input_schema.get("properties", {}).items():
                assert prop.get("description"), f"{tool.name}.{name} has no description"

        def call(tool: str, **arguments: Any) -> Reply:
            return Reply(portal.call(client.call_tool, tool, arguments))

        story(call)
    return [tool.name for tool in listed.tools]
