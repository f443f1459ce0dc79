"""Help as a user meets it: `git rewind --help` (the man page, from a real install), `-h`, `--version`.

The package is installed once, non-editable, into a fresh virtualenv (no system site packages),
the way a user installs it; its bin/ then leads PATH. `git rewind --help` becomes
`git help rewind`, which runs man; man finds <venv>/share/man through its PATH→../share/man
mapping, with no MANPATH from us. The man page is also checked against the click commands, so
a new command or option cannot go undocumented.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.workdir import git_env

ROOT = Path(__file__).resolve().parent.parent
MAN_SOURCE = ROOT / "man" / "git-rewind.1"

# Every command, with the options its -h must show (and the man page must document).
COMMANDS: dict[str, list[str]] = {
    "snap": ["-m", "--message", "--session", "--agent", "--trigger", "--tool", "--path", "--tag",
             "--summary", "--allow-empty", "--json"],
    "list": ["--session", "--all", "--worktree", "--all-worktrees", "-n", "--grep", "--path", "--tag", "--agent",
             "--safety", "--since", "--until", "--remote", "--json", "--color", "--no-pager"],
    "show": ["--worktree", "--json", "-p", "--patch", "--color", "--no-pager"],
    "diff": ["--worktree", "--stat", "--name-status", "--color", "--no-pager"],
    "files": ["--worktree", "--all"],
    "tag": ["--worktree", "-d", "--delete"],
    "cat": ["--worktree"],
    "blame": ["--json"],
    "trace": ["--uncommitted"],
    "undo": ["--worktree", "--code", "--conversation", "--full", "--fork", "--dry-run", "-y", "--yes", "--only",
             "--agent-only", "--merge", "-p", "--patch", "--json"],
    "redo": ["--dry-run", "-y", "--yes", "--json"],
    "revert": ["--merge", "--dry-run", "-y", "--yes", "--only", "-p", "--patch", "--json"],
    "gc": ["--keep", "--older-than", "--max-size", "--include-tagged", "--dry-run", "--remote"],
    "push": ["--session", "--all", "--with-conversation", "--allow-secrets", "--prune", "-q", "--quiet"],
    "fetch": [],
    "purge": ["--path", "--text", "--dry-run"],
    "hook": ["--agent"],
    "mcp": ["--repo"],
    "web": ["--port", "--no-open", "--read-only"],
    "install": ["--agent", "--scope", "--mcp", "--git-hooks"],
    "uninstall": ["--agent", "--scope", "--mcp", "--git-hooks", "--everything"],
    "status": ["-n", "--json"],
    "daemon": [],
    "watch": ["--session"],
    "config": [],
}

# What a fresh install must not copy from a working checkout.
_NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".venv*", "venv",
                                     ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis")


def _version() -> str:
    match = re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert match, "no version in pyproject.toml"
    return match.group(1)


def _plain(text: str) -> str:
    """Rendered man text with one space between words and ASCII hyphens, on any groff."""
    text = re.sub(r".\x08", "", text)  # overstrike bold/underline, should a pager-less man keep it
    text = text.translate({0x2010: "-", 0x2011: "-", 0x2212: "-", 0x2019: "'", 0x2018: "'", 0x02DC: "~"})
    return " ".join(text.split())


def _deroff(source: str) -> str:
    """The man page source as the words a reader sees (enough for checking names and options)."""
    text = source.replace("\\-", "-").replace("\\(ti", "~").replace("\\(aq", "'").replace("\\&", "")
    text = text.replace("\\~", " ").replace("\\e", "\\")
    text = re.sub(r"\\f[BIRP]", "", text)
    text = "\n".join(line for line in text.splitlines() if not line.startswith('.\\"'))
    return text


class Installed:
    """A fresh virtualenv holding a real (non-editable) install, and the environment to use it."""

    def __init__(self, venv: Path, env: dict[str, str], cwd: Path) -> None:
        self.venv = venv
        self.bin = venv / "bin"
        self.env = env
        self.cwd = cwd

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=self.cwd, env={**self.env, **(env or {})}, capture_output=True,
                              text=True, errors="replace", timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("install")
    # Build from a clean copy: an in-tree build would leave build/ and *.egg-info in the checkout.
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    venv = base / "venv"
    outer = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    outer.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], env=outer, capture_output=True, text=True)
    assert made.returncode == 0, f"python -m venv failed:\n{made.stdout}{made.stderr}"
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(source)],
                         env=outer, capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, f"pip install {source} failed:\n{pip.stdout}{pip.stderr}"

    home = base / "home"
    home.mkdir()
    cwd = base / "outside"  # help must work outside any repository
    cwd.mkdir()
    env = git_env(home)
    for key in ("MANPATH", "MANOPT", "MANSECT", "MANROFFOPT", "MAN_KEEP_FORMATTING", "MANLESS",
                "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "GROFF_NO_SGR"):
        env.pop(key, None)
    # The venv first; then only where git and man live, so no other git-rewind (or its page) is near.
    path = [str(venv / "bin")]
    for tool in ("git", "man"):
        found = shutil.which(tool)
        if found and os.path.dirname(found) not in path:
            path.append(os.path.dirname(found))
    path += [p for p in ("/usr/bin", "/bin") if p not in path]
    env.update(PATH=os.pathsep.join(path), MANPAGER="cat", PAGER="cat", GIT_PAGER="cat", MANWIDTH="80",
               GIT_CEILING_DIRECTORIES=str(base))
    return Installed(venv, env, cwd)


# (a) git rewind --help shows the installed man page ---------------------------------------------------


def test_install_puts_the_man_page_in_the_venv(installed: Installed) -> None:
    page = installed.venv / "share" / "man" / "man1" / "git-rewind.1"
    assert page.is_file(), "the wheel did not install share/man/man1/git-rewind.1 into the venv"
    assert page.read_bytes() == MAN_SOURCE.read_bytes()
    assert (installed.bin / "git-rewind").is_file()


@pytest.mark.needs("man")
def test_man_finds_the_page_through_path_only(installed: Installed) -> None:
    # Exactly what git does before it runs man: its own man directory, then man's default path.
    git_man = installed.run("git", "--man-path").stdout.strip()
    where = installed.run("man", "-aw", "git-rewind", env={"MANPATH": f"{git_man}:"})
    assert where.returncode == 0, f"man does not find git-rewind under {installed.venv}/share/man:\n" \
                                  f"{where.stderr}\nPATH={installed.env['PATH']}"
    pages = [Path(p).resolve() for p in where.stdout.split()]
    expected = (installed.venv / "share" / "man" / "man1" / "git-rewind.1").resolve()
    assert pages == [expected], f"man would show another page than the venv's: {pages}"


@pytest.mark.needs("man")
def test_git_rewind_help_shows_the_man_page(installed: Installed) -> None:
    run = installed.run("git", "rewind", "--help")
    assert run.returncode == 0, f"git rewind --help failed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
    text = _plain(run.stdout)
    assert "GIT-REWIND(1)" in text
    assert "git-rewind - checkpoints of the working tree, on git, that you can rewind to" in text  # NAME
    assert "Reverse the most recent undo: restore the safety checkpoint it took" in text  # COMMANDS redo
    assert "git notes --ref=rewind show <commit>" in text  # STORAGE
    assert "Usage:" not in run.stdout, "click's help was shown instead of the man page"


@pytest.mark.needs("man")
def test_help_finds_the_page_when_only_the_command_is_linked_into_a_bin_directory(installed: Installed,
                                                                                  tmp_path: Path) -> None:
    """pipx before 1.5 and `uv tool` link bin/git-rewind into ~/.local/bin and leave the page in their
    venv, where man never looks: the first `git rewind` command links it into ~/.local/share/man."""
    local = tmp_path / ".local"
    (local / "bin").mkdir(parents=True)
    (local / "bin" / "git-rewind").symlink_to(installed.bin / "git-rewind")
    others = [p for p in installed.env["PATH"].split(os.pathsep) if p != str(installed.bin)]
    env = {"PATH": os.pathsep.join([str(local / "bin"), *others])}
    assert installed.run("git", "rewind", "--help", env=env).returncode != 0  # no page where man looks yet
    assert installed.run("git", "rewind", "--version", env=env).returncode == 0
    link = local / "share" / "man" / "man1" / "git-rewind.1"
    assert link.is_symlink() and link.resolve() == (installed.venv / "share" / "man" / "man1" / "git-rewind.1")
    run = installed.run("git", "rewind", "--help", env=env)
    assert run.returncode == 0 and "GIT-REWIND(1)" in _plain(run.stdout), run.stderr
    # A page that works is never replaced (pipx 1.5 and later link their own; a user's own file stays).
    link.unlink()
    link.write_text("mine\n")
    installed.run("git", "rewind", "--version", env=env)
    assert not link.is_symlink() and link.read_text() == "mine\n"


def test_the_installed_package_ships_the_slash_commands(installed: Installed) -> None:
    """`install --agent claude-code` from a non-editable install finds /checkpoint, /resume and /rewind."""
    home = Path(installed.env["HOME"])
    run = installed.run("git", "rewind", "install", "--agent", "claude-code")
    assert run.returncode == 0, run.stderr
    source = ROOT / "hooks" / "claude-code" / "commands"
    for name in ("checkpoint", "resume", "rewind"):
        assert f"installed command /{name}:" in run.stdout
        assert (home / ".claude" / "commands" / f"{name}.md").read_bytes() == (source / f"{name}.md").read_bytes()
    run = installed.run("git", "rewind", "uninstall", "--agent", "claude-code")
    assert run.returncode == 0 and not (home / ".claude").exists(), run.stdout + run.stderr


# (b) -h prints click's help, for the group and every command -------------------------------------------


def test_group_h_lists_every_command(installed: Installed) -> None:
    run = installed.run("git", "rewind", "-h")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Usage: git rewind [OPTIONS] COMMAND [ARGS]...")
    commands = run.stdout.split("Commands:", 1)[1]
    listed = {line.split()[0] for line in commands.splitlines() if line.strip()}
    assert listed == set(COMMANDS)
    assert "--version" in run.stdout and "-h, --help" in run.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_h_shows_usage_and_options(installed: Installed, command: str) -> None:
    run = installed.run("git", "rewind", command, "-h")
    assert run.returncode == 0, f"git rewind {command} -h: {run.returncode}\n{run.stderr}"
    assert run.stdout.startswith(f"Usage: git rewind {command} [OPTIONS]"), run.stdout
    options = run.stdout.split("Options:", 1)[1]
    shown = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", options))
    for flag in COMMANDS[command] + ["-h", "--help"]:
        assert flag in shown, f"git rewind {command} -h does not show {flag}:\n{run.stdout}"
    assert run.stderr == ""


# (c) --version --------------------------------------------------------------------------------------------


def test_version(installed: Installed) -> None:
    expected = f"git-rewind, version {_version()}"
    for args in (["git-rewind", "--version"], ["git", "rewind", "--version"]):
        run = installed.run(*args)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == expected


# the man page documents what the command line has, and renders cleanly ------------------------------------


def test_man_page_documents_every_command_and_option() -> None:
    from git_rewind.base import config
    from git_rewind.faces import cli

    text = _deroff(MAN_SOURCE.read_text(encoding="utf-8"))
    synopsis = text.split(".SH SYNOPSIS", 1)[1].split(".SH", 1)[0]
    commands = text.split(".SH COMMANDS", 1)[1].split(".SH", 1)[0]
    assert set(cli.cli.commands) == set(COMMANDS)
    documented = set(re.findall(r"^git rewind ([a-z]+)", synopsis, re.MULTILINE))
    assert documented == set(COMMANDS), "SYNOPSIS and the commands differ"
    for name, command in cli.cli.commands.items():
        flags = {f for p in command.params for f in p.opts + p.secondary_opts if f.startswith("-")}
        assert flags == set(COMMANDS[name]), f"{name}: update COMMANDS and the man page for {flags}"
        usage = re.search(rf"^git rewind {name}\b.*?(?=^git)", synopsis, re.MULTILINE | re.DOTALL)
        entry = re.search(rf"^\.PP\n{name}\b.*?(?=^\.PP\n[a-z]+ |\Z)", commands, re.MULTILINE | re.DOTALL)
        assert usage and entry
        for flag in flags:
            pattern = rf"(?<![\w-]){re.escape(flag)}(?![\w-])"
            assert re.search(pattern, usage.group(0)), f"SYNOPSIS lacks {name} {flag}"
            assert re.search(pattern, entry.group(0)), f"COMMANDS lacks {name} {flag}"
    for key in config.DEFAULTS:
        assert f"GIT_REWIND_{key.upper()}" in text, f"ENVIRONMENT lacks GIT_REWIND_{key.upper()}"
        assert re.search(rf"^\.TP\n{key}$", text, re.MULTILINE), f"CONFIGURATION lacks {key}"


@pytest.mark.needs("groff")
def test_man_page_renders_without_warnings() -> None:
    run = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(MAN_SOURCE)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stderr == "", run.stderr
