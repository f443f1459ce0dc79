"""What `git rewind install` writes, as the installed command computes it.

The hook entries at user and local scope name the interpreter that ran `install` (hook_program: its
sys.executable). Tests run `git-rewind`, whose interpreter is the one its script's first line names, which may
be spelled otherwise than the test process's own (`.venv/bin/python3` against `.venv/bin/python`, depending on
how pip was run): the expectation is built from that interpreter, not from the test's.
"""

from __future__ import annotations

import functools
import json
import subprocess

from git_rewind.agents import install


def interpreter() -> str:
    """The interpreter the `git-rewind` script runs (its `#!` line), or this one's where it is not a script."""
    program = install.executable()
    try:
        with open(program[0], "rb") as fh:
            first = fh.readline().decode()
    except (OSError, UnicodeDecodeError):
        return program[0]
    return first[2:].strip() if first.startswith("#!") and " " not in first[2:].strip() else program[0]


@functools.cache
def hook_program() -> list[str]:
    """install.hook_program() as the installed `git-rewind` computes it: its interpreter, and the package it
    imports (site-packages after `pip install .`, where the tests' own imports may read the source tree)."""
    code = "import json; from git_rewind.agents import install; print(json.dumps(install.hook_program()))"
    out = subprocess.run([interpreter(), "-I", "-c", code], cwd="/", capture_output=True, text=True, check=True)
    program = json.loads(out.stdout)
    assert isinstance(program, list) and all(isinstance(p, str) for p in program)
    return [interpreter(), *program[1:]]


def hook_command(agent: str, scope: str = "user") -> str:
    """install.hook_command(AGENT, scope=SCOPE) as the installed `git-rewind` writes it."""
    if scope in install.SHARED_SCOPES:
        return install.hook_command(agent, scope=scope)
    return install.hook_command(agent, program=hook_program(), scope=scope)


@functools.cache
def daemon_fingerprint() -> str:
    """daemon.fingerprint() as the installed `git-rewind` computes it: what a daemon `git rewind daemon start`
    started expects of a request from its own installation (the tests' imports may read the source tree)."""
    code = "from git_rewind.base import daemon; print(daemon.fingerprint())"
    out = subprocess.run([interpreter(), "-I", "-c", code], cwd="/", capture_output=True, text=True, check=True)
    return out.stdout.strip()
