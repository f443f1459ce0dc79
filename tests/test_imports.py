"""The package's import graph: no module reaches back up (no cycle), and the hook's path stays light.

The graph is read from the source with `ast`, not by importing: every `import` and `from … import`
inside git_rewind/ that names a git_rewind module is an edge, at module level or inside a function
(a lazy import is still a dependency, only a later one). Imports under `if TYPE_CHECKING:` never
run and are left out. A package that loads its submodules by name
(`importlib.import_module(f"{__name__}.…")`, as `agents.module` does) depends on all of them.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import git_rewind

PACKAGE = Path(git_rewind.__file__).resolve().parent
NAME = "git_rewind"
ROOT = Path(__file__).resolve().parent.parent


def modules(package: Path = PACKAGE, name: str = NAME) -> dict[str, Path]:
    """Every module of PACKAGE by dotted name (a package by its own name, for its __init__.py)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = (name, *path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of TREE except those under `if TYPE_CHECKING:` (their `else:` branch does run)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))
    return out


def _name_string(arg: ast.expr, importer: str, is_package: bool, known: dict[str, Path]) -> list[str] | None:
    """The modules a module-name expression may name: a literal, or `f"{__name__}.…"` in a package."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    package = importer if is_package else importer.rpartition(".")[0]
    if isinstance(arg, ast.JoinedStr) and len(arg.values) >= 2:
        head, dot = arg.values[0], arg.values[1]
        if (isinstance(head, ast.FormattedValue) and isinstance(head.value, ast.Name)
                and head.value.id == "__name__" and isinstance(dot, ast.Constant)
                and str(dot.value).startswith(".") and is_package):
            if len(arg.values) == 2:  # f"{__name__}.claude_code": exactly that one
                return [f"{package}{str(dot.value)}"]
            prefix = f"{package}."
            return [name for name in known if name.startswith(prefix) and "." not in name[len(prefix):]]
    return None


def _dynamic_target(call: ast.Call, importer: str, is_package: bool, known: dict[str, Path],
                    tables: dict[str, ast.Dict]) -> list[str] | None:
    """The modules an `importlib.import_module(…)` call may load, or None when it cannot be read.

    Read: a literal, `f"{__name__}.…"`, or `TABLE[key]` where TABLE is a module-level dict literal
    whose values are such names (the agents' registry): then every value counts.
    """
    if len(call.args) != 1:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id in tables:
        found: list[str] = []
        for value in tables[arg.value.id].values:
            names = _name_string(value, importer, is_package, known)
            if names is None:
                return None
            found += names
        return found
    return _name_string(arg, importer, is_package, known)


def import_graph(package: Path = PACKAGE, name: str = NAME) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """({module: {imported module: [where]}}, [dynamic imports that could not be read]) inside PACKAGE."""
    known = modules(package, name)
    graph: dict[str, dict[str, list[str]]] = {name: {} for name in known}
    unreadable: list[str] = []
    for importer, path in known.items():
        is_package = path.name == "__init__.py"
        package_parts = importer.split(".") if is_package else importer.split(".")[:-1]
        rel = f"{path.relative_to(package.parent)}"

        def add(target: str, line: int, importer: str = importer, rel: str = rel) -> None:
            # `import a.b.c` and `from a.b import c`: the deepest name that is one of our modules.
            parts = target.split(".")
            while parts and ".".join(parts) not in known:
                parts.pop()
            if parts and parts[0] == name and ".".join(parts) != importer:
                graph[importer].setdefault(".".join(parts), []).append(f"{rel}:{line}")

        tree = ast.parse(path.read_text(), str(path))
        tables = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                  and isinstance(node.value, ast.Dict) for target in node.targets if isinstance(target, ast.Name)}
        for node in _runtime_nodes(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package_parts[: len(package_parts) - (node.level - 1)]
                    source = ".".join([*base, node.module] if node.module else base)
                else:
                    source = node.module or ""
                for alias in node.names:
                    # `from . import agents` imports the submodule; `from .errors import X` the module.
                    target = f"{source}.{alias.name}"
                    add(target if target in known else source, node.lineno)
            elif isinstance(node, ast.Call):
                func = node.func
                if (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
                        isinstance(func, ast.Name) and func.id in ("import_module", "__import__")):
                    targets = _dynamic_target(node, importer, is_package, known, tables)
                    if targets is None:
                        unreadable.append(f"{rel}:{node.lineno}")
                    for target in targets or []:
                        add(target, node.lineno)
    return graph, unreadable


def strongly_connected(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def simple_cycles(graph: dict[str, dict[str, list[str]]], component: list[str], limit: int = 20) -> list[list[str]]:
    """The elementary cycles inside one component, each starting at its smallest module (at most LIMIT)."""
    members = set(component)
    cycles: list[list[str]] = []
    for start in component:
        todo = [(start, [start])]
        while todo and len(cycles) < limit:
            node, path = todo.pop()
            for nxt in sorted(graph[node], reverse=True):
                if nxt == start:
                    cycles.append([*path, start])
                elif nxt in members and nxt > start and nxt not in path:
                    todo.append((nxt, [*path, nxt]))
    return sorted(cycles)


def describe(graph: dict[str, dict[str, list[str]]], cycle: list[str]) -> str:
    short = [name.partition(".")[2] or name for name in cycle]
    def by_line(site: str) -> tuple[str, int]:
        file, _, line = site.rpartition(":")
        return file, int(line)

    where = [f"    {a} -> {b}: {', '.join(sorted(graph[a][b], key=by_line))}"
             for a, b in zip(cycle, cycle[1:], strict=False)]
    return " -> ".join(short) + "\n" + "\n".join(where)


# The walker itself, on what it must see ---------------------------------------------------------


def test_the_walker_sees_lazy_relative_and_registry_imports() -> None:
    graph, unreadable = import_graph()
    assert unreadable == []  # a dynamic import the walker cannot read would hide an edge
    assert "git_rewind.base.errors" in graph["git_rewind.hook.hook"]  # `from .errors import …` at module level
    assert "git_rewind.store.store" in graph["git_rewind.hook.hook"]  # `from . import store` inside a function
    assert "git_rewind.agents.event" in graph["git_rewind.agents.claude_code"]  # `from .. import event as ev`
    assert "git_rewind.agents.claude_code" in graph["git_rewind.agents"]  # importlib.import_module(f"{__name__}.…")
    for module in graph:
        assert module not in graph[module]


def test_the_walker_finds_a_cycle_through_a_lazy_import_and_not_through_type_checking(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from .high import X\n")
    (pkg / "high.py").write_text("from . import low\nfrom .sub import mid\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "mid.py").write_text("def f():\n    import pkg.high\n")
    graph, unreadable = import_graph(pkg, "pkg")
    assert unreadable == []
    assert graph["pkg.high"].keys() == {"pkg.low", "pkg.sub.mid"} and graph["pkg.low"] == {}
    assert strongly_connected(graph) == [["pkg.high", "pkg.sub.mid"]]
    cycle = simple_cycles(graph, ["pkg.high", "pkg.sub.mid"])
    assert cycle == [["pkg.high", "pkg.sub.mid", "pkg.high"]]
    assert describe(graph, cycle[0]).startswith("high -> sub.mid -> high\n    pkg.high -> pkg.sub.mid: pkg/high.py:2")


def test_type_checking_imports_are_not_edges() -> None:
    tree = ast.parse("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    import a\nelse:\n    import b\nimport c\n")
    names = {alias.name for node in _runtime_nodes(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert names == {"b", "c"}


# The package ------------------------------------------------------------------------------------


def test_no_import_cycle_inside_the_package() -> None:
    graph, _ = import_graph()
    cycles = [cycle for component in strongly_connected(graph) for cycle in simple_cycles(graph, component)]
    assert not cycles, "import cycles inside git_rewind/:\n" + "\n".join(describe(graph, c) for c in cycles)


WEB_LIBRARIES = ("starlette", "uvicorn", "sse_starlette", "pygments", "unidiff")  # `git rewind web` only


def test_the_hook_path_imports_no_click_pygit2_or_mcp() -> None:
    """What an agent's hook call loads: the entry, the hook, what it imports lazily, every agent module."""
    hot = ["git_rewind.main", "git_rewind.hook.hook", "git_rewind.hook.policy", "git_rewind.base.lock",
           "git_rewind.base.config", "git_rewind.store.store", "git_rewind.hook.resume"]
    hot += sorted(name for name in modules() if name.startswith(f"{NAME}.agents."))
    code = f"import sys\nimport {', '.join(hot)}\nprint(__import__('json').dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(proc.stdout)
    heavy = [name for name in loaded if name.split(".")[0] in ("click", "pygit2", "mcp", *WEB_LIBRARIES)]
    assert heavy == [], f"the hook's path imports {heavy}"
    assert set(hot) <= set(loaded)


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def documented_layers(known: dict[str, Path]) -> dict[str, int]:
    """Module → layer number, from the tables of docs/architecture.md (`## N. `package/` …` sections)."""
    layers: dict[str, int] = {}
    layer = 0
    for line in ARCHITECTURE.read_text().splitlines():
        heading = re.match(r"## (\d+)\. (?:`([a-z_]+)/`)?", line)
        if heading:
            layer = int(heading.group(1))
            if heading.group(2):  # a sub-package's section: its __init__ is in its layer
                layers.setdefault(f"{NAME}.{heading.group(2)}", layer)
            continue
        cell = re.match(r"\| `([^`]+)` \|", line)
        if not (cell and layer):
            continue
        path = cell.group(1)
        if path == "agents/<agent>.py":  # every agent module
            names = [m for m in known if m.startswith(f"{NAME}.agents.") and m != f"{NAME}.agents.base"]
        elif path.endswith("/"):  # a package and everything in it
            base = f"{NAME}.{path.rstrip('/').replace('/', '.')}"
            names = [m for m in known if m == base or m.startswith(base + ".")]
        else:
            module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            names = [f"{NAME}.{module}"]
        for name in names:
            layers.setdefault(name, layer)
    return layers


def test_every_import_goes_to_its_own_layer_or_one_listed_before_it() -> None:
    known = modules(PACKAGE, NAME)
    layers = documented_layers(known)
    missing = sorted(set(known) - set(layers) - {NAME})
    assert not missing, f"modules docs/architecture.md does not place in a layer: {missing}"
    unknown = sorted(set(layers) - set(known))
    assert not unknown, f"docs/architecture.md names modules that do not exist: {unknown}"
    graph, _unreadable = import_graph()
    upward = [f"{importer} (layer {layers[importer]}) imports {target} (layer {layers[target]}) at {where[0]}"
              for importer, targets in graph.items() if importer != NAME
              for target, where in targets.items() if target != NAME and layers[target] > layers[importer]]
    assert not upward, "imports that reach up a layer:\n" + "\n".join(upward)


def test_asking_the_daemon_imports_no_socket_module_json_or_selectors(tmp_path: Path) -> None:
    """The client's link to the daemon (on every checkpoint a hook takes) uses the C _socket and minijson."""
    import socket
    import threading

    path = tmp_path / "daemon.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            buffer = b""
            while b"\n" not in buffer:
                buffer += conn.recv(4096)
            conn.sendall(b'{"pid": 1, "answered": {"changes": 0, "full": 0}}\n')

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    code = (
        "import sys\nfrom git_rewind.base import daemon\n"
        f"class R:\n    rewind_dir = {str(tmp_path)!r}\n"
        "link = daemon.Link.open(R())\nassert link is not None\nprint(link.ask({'op': 'status'}))\nlink.close()\n"
        "print(sorted(m for m in ('socket', 'json', 'selectors', 'pygit2') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    thread.join(5)
    server.close()
    answered, loaded = proc.stdout.splitlines()
    assert answered == "{'pid': 1, 'answered': {'changes': 0, 'full': 0}}"
    assert loaded == "[]"


def test_the_top_of_the_package_is_sub_packages_and_the_dispatching_entry() -> None:
    """A newcomer sees the layers in the folders: at the top, only the entry (main.py dispatches) and the
    sub-packages docs/architecture.md describes."""
    files = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert files == ["__init__.py", "__main__.py", "main.py"]
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert folders == ["agents", "base", "faces", "hook", "ops", "resources", "sharing", "store", "watching"]
    text = ARCHITECTURE.read_text()
    assert all(f"`{name}/`" in text for name in folders)
