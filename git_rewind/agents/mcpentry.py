"""An agent's MCP configuration: where our server's entry goes and what it says."""

from __future__ import annotations

from .identity import Identity, below

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



class McpEntry(Identity):
    """Our MCP server's entry in the agent's configuration."""

    def mcp_file(self, scope: str, root: str | None, home: str) -> str | None:
        """The MCP configuration file at SCOPE (user or project); None: no MCP support known."""
        return None if self.mcp_path is None else below(scope, root, home, self.mcp_path)

    def mcp_entry(self, command: list[str]) -> dict[str, Any]:
        """Our server's entry, as the agent's own `mcp add` writes it: COMMAND plus `mcp`."""
        entry: dict[str, Any] = {"type": self.mcp_type} if self.mcp_type else {}
        entry.update({"command": command[0], "args": [*command[1:], "mcp"]})
        return entry
