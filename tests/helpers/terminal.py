"""A command run in a real pseudo-terminal, answering its prompts one by one as a person would."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

_ANSI = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")
# git's hunk prompts and ours end with "[y,n,q,a,d,...,?]? "; click's confirmations with "[y/N]: ".
_PROMPT = re.compile(rb"(\]\? |\]: )$")
INTERRUPT = "^C"


def run(args: list[str], cwd: Path, env: dict[str, str], answers: list[str],
        timeout: float = 60.0, term: str = "dumb") -> tuple[int, str]:
    """Run ARGS with a pseudo-terminal as stdin, stdout and stderr; type each of ANSWERS (and Enter) when a
    prompt waits for it, or for INTERRUPT press Ctrl-C (SIGINT to the command's process group). Returns the
    exit code and everything shown (colours dropped, CR LF as LF). TERM: what the terminal says it is (git
    never colours a `dumb` one)."""
    controller, terminal = os.openpty()
    proc = subprocess.Popen(args, cwd=cwd, env={**env, "TERM": term}, stdin=terminal, stdout=terminal,
                            stderr=terminal, start_new_session=True, close_fds=True)
    os.close(terminal)
    shown = b""
    pending = list(answers)
    since_answer = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.1)
            if not ready:
                if pending and _PROMPT.search(_ANSI.sub(b"", since_answer)):
                    answer = pending.pop(0)
                    if answer == INTERRUPT:
                        os.killpg(proc.pid, signal.SIGINT)
                    else:
                        os.write(controller, answer.encode() + b"\n")
                    since_answer = b""
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: every holder of the terminal has closed it
                break
            if not chunk:
                break
            shown += chunk
            since_answer += chunk
        else:
            proc.kill()
            raise AssertionError(f"{args} did not finish in {timeout}s; shown:\n{shown.decode(errors='replace')}")
    finally:
        os.close(controller)
    code = proc.wait(timeout=timeout)
    text = _ANSI.sub(b"", shown).replace(b"\r\n", b"\n").decode(errors="replace")
    assert not pending, f"prompts ran out with {pending} unanswered; shown:\n{text}"
    return code, text
