"""How fast `git rewind mcp` answers `initialize`, against the MCP SDK's own floor, in the same run.

Each run spawns a fresh server process over stdio with the SDK's client and times spawn →
`initialize` answered, then one `checkpoint_list` (the first tool call, which opens the
repository). Baselines, interleaved: the same client against a bare MCPServer with one tool
(what any server built on the SDK pays), and `python -c pass`.

    python bench/mcp_bench.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE_SERVER = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("bare")

def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"

server.add_tool(ping)
server.run("stdio")
"""


def _time_server(command: list[str], tool: str | None, cwd: str) -> tuple[float, float]:
    """(ms to initialize, ms for the first tool call) of one fresh server process."""
    from anyio.from_thread import start_blocking_portal
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], cwd=cwd, env=dict(os.environ))
    start = time.perf_counter()
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(stdio_client(params)) as streams, \
            portal.wrap_async_context_manager(ClientSession(*streams)) as client:
        portal.call(client.initialize)
        initialized = time.perf_counter()
        if tool:
            result = portal.call(client.call_tool, tool, {})
            if result.is_error:
                raise SystemExit(f"{tool} failed: {result.content}")
        called = time.perf_counter()
    return (initialized - start) * 1000, (called - initialized) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    rewind = Path(sys.executable).with_name("git-rewind")
    if not rewind.exists():
        raise SystemExit(f"no git-rewind beside {sys.executable}: run with the Python of an install")
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        repo = os.path.join(tmp, "repo")
        subprocess.run(["git", "init", "-q", repo], check=True)
        for i in range(200):
            Path(repo, f"f{i}.txt").write_text(f"file {i}\n")
        subprocess.run([str(rewind), "snap", "-m", "one"], cwd=repo, check=True, capture_output=True)
        bare = os.path.join(tmp, "bare.py")
        Path(bare).write_text(BARE_SERVER)
        rows: dict[str, list[tuple[float, float]]] = {"git rewind mcp": [], "bare MCPServer (SDK floor)": []}
        passes = []
        for _ in range(args.runs):
            rows["git rewind mcp"].append(_time_server([str(rewind), "mcp"], "checkpoint_list", repo))
            rows["bare MCPServer (SDK floor)"].append(_time_server([sys.executable, bare], "ping", repo))
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            passes.append((time.perf_counter() - start) * 1000)
    floor = statistics.median(i for i, _ in rows["bare MCPServer (SDK floor)"])
    print(f"{'server':<28} {'initialize ms':>14} {'vs floor':>9} {'first call ms':>14}   ({args.runs} runs, medians)")
    for name, times in rows.items():
        init = statistics.median(i for i, _ in times)
        call = statistics.median(c for _, c in times)
        print(f"{name:<28} {init:>14.0f} {init / floor:>8.2f}x {call:>14.0f}")
    print(f"{'python -c pass':<28} {statistics.median(passes):>14.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
