"""The hook as a thin client: read the payload, let the work tree's daemon answer the whole call, print
its answer; without one, run the hook here.

The command `install` writes (user and local scope) runs this through hook/entry.py as `<python> -I -S`:
no `site` (a third of an interpreter's start) and nothing imported that the daemon's answer does not need
(no json, re, subprocess or socket.py: `_socket` and minijson). `git-rewind hook` comes here too (it has
paid for `site`, and saves the rest). The daemon (watching/daemonserver.py) runs the same hook.run under
this process's environment, directory and umask, so its answer is what this process would have printed.
Without a daemon (one stat), with one that does not answer, or when it says to (another work tree, an
upgrade), the hook runs in this process, after `site` is set up as the console script has it. Whatever
happens, exit 0.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONNECT_TIMEOUT = 0.5  # seconds: a daemon that does not even accept is stuck or gone
# Seconds to wait for the daemon's answer. A daemon-answered hook takes tens of ms; a long one waits for the
# store lock (another writer, a restore) or scans the whole tree (seconds at 100k files). Agents kill a hook
# at 30 s: after this bound the hook runs here with the rest of its lock budget (hook.HOOK_LOCK_TIMEOUT, 20 s,
# less what was waited), so even the worst case (10 s + 10 s of lock + a full scan) ends well before that.
ANSWER_TIMEOUT = 10.0


def main(argv: list[str]) -> int:
    """One hook call (`[hook] --agent NAME`, the payload on stdin); always 0."""
    if argv[:1] == ["hook"]:
        argv = argv[1:]
    try:
        raw = sys.stdin.buffer.read()
    except (OSError, ValueError, AttributeError):
        raw = b""  # no stdin: the hook says the payload is not JSON
    started = time.monotonic()
    try:
        answer, failure = ask(raw, argv)
    except Exception as exc:  # noqa: BLE001 - the daemon is an optimisation: never a reason to fail
        answer, failure = None, f"{type(exc).__name__}: {exc}"
    if answer is not None:
        _print(answer)
        return 0
    return fallback(raw, argv, failure, time.monotonic() - started)


def ask(raw: bytes, argv: list[str], op: str = "hook",
        timeout: float = ANSWER_TIMEOUT) -> tuple[dict[str, Any] | None, str | None]:
    """The daemon's answer to this call ({"out", "err"}, and what else the op answers: an exit `code`), or
    (None, why it failed) to run the call here; why is None where that is normal (no daemon, another work
    tree, an upgrade). OP: the daemon's request for it, `hook` (an agent's hook, hook.serve), `githook` (a
    git hook, githook.serve) or `undo` (a plain `git rewind undo ID --yes`, undocmd.serve). TIMEOUT: how
    long the answer is waited for."""
    from ..base import daemon
    from ..base.repo import Repo, plain_layout

    if not daemon.supported():
        return None, None
    cwd = os.getcwd()  # agents run hooks in the project; the daemon checks the payload's own cwd
    found = plain_layout(cwd)
    if found is None:
        return None, None  # an unusual layout or GIT_DIR-style environment: the hook asks git
    link = daemon.Link.to(Repo(*found).rewind_dir, CONNECT_TIMEOUT)
    if link is None:
        return None, None
    from ..base import minijson

    request = {"op": op, "fingerprint": daemon.fingerprint(), "argv": argv,
               "payload": raw.decode("utf-8", "surrogateescape"), "cwd": cwd, "env": dict(os.environ),
               "umask": _umask(), "parent": os.getppid()}
    try:
        got = minijson.loads(link.exchange(minijson.dumps(request), timeout))
    except TimeoutError:
        return None, f"the daemon did not answer within {timeout:g} s"
    except (OSError, ValueError) as exc:
        return None, f"the daemon did not answer ({exc})"
    finally:
        link.close()
    if not isinstance(got, dict):
        return None, "the daemon's answer is not a JSON object"
    if isinstance(got.get("out"), str) and isinstance(got.get("err"), str):
        return got, None
    if "fallback" in got or got.get("stopping"):
        return None, None
    return None, f"the daemon answered {str(got)[:200]}"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _print(answer: dict[str, str]) -> None:
    for stream, text in ((sys.stdout, answer["out"]), (sys.stderr, answer["err"])):
        if text:
            try:
                stream.write(text)
                stream.flush()
            except (OSError, ValueError):  # closed: the agent goes on without it
                pass


def fallback(raw: bytes, argv: list[str], failure: str | None, waited: float) -> int:
    """Run the call in this process (hook.main), with `site` as the console script has it; FAILURE (the
    daemon was there and did not answer) is said on stderr and in the log entry."""
    if failure is not None:
        try:
            sys.stderr.write(f"git-rewind: {failure}; the hook ran without it\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    try:
        with_site()
        from . import hook
    except BaseException as exc:  # noqa: BLE001 - a broken installation must not break the agent either
        try:
            sys.stderr.write(f"git-rewind: hook skipped, {type(exc).__name__}: {exc}\n")
        except (OSError, ValueError):
            pass
        return 0
    return hook.main(argv, raw, waited, failure)


def with_site() -> None:
    """The module search path the console script's interpreter has, for a process started `-I -S` (the
    hook's installed command): site-packages with their .pth files (`site.main()`: the venv's, pipx's, the
    system's, editable installs' finders), the user's site-packages where the interpreter would use them
    (not in a venv, PYTHONNOUSERSITE unset: a `pip install --user`), and PYTHONPATH, which -I ignores.
    A process that has `site` already (`git-rewind hook`) is left as it is."""
    if not sys.flags.no_site or "site" in sys.modules:
        return
    import site

    if sys.flags.no_user_site:  # -I says no; the console script decides as site does without it (a venv: no)
        site.ENABLE_USER_SITE = (not os.environ.get("PYTHONNOUSERSITE") and os.getuid() == os.geteuid()
                                 and os.getgid() == os.getegid())
    site.main()  # in its order: the user's site-packages before the system's, as the console script has them
    if sys.flags.ignore_environment and os.environ.get("PYTHONPATH"):
        extra = [os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p]
        sys.path[1:1] = [p for p in extra if p not in sys.path]
