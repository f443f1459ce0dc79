"""The hook as a thin client: read the payload, let the work tree's daemon answer the whole call, print
its answer; without one, run the hook here.

The command `install` writes (user and local scope) runs this through hook/entry.py as `<python> -I -S`:
no `site` (a third of an interpreter's start) and nothing imported that the daemon's answer does not need
(not even `os`: base/daemonlink.py does it on `posix`, `_socket` and minijson). `git-rewind hook` comes
here too (it has paid for `site`, and saves the rest). The daemon (watching/daemonserver.py) runs the same
hook.run under this process's environment, directory and umask, so its answer is what this process would have printed.
Without a daemon (one stat), with one that does not answer, or when it says to (another work tree, an
upgrade), the hook runs in this process, after `site` is set up as the console script has it. Whatever
happens, exit 0.
"""

# No `from __future__ import annotations`: importing __future__ is a module more on the hook's path (the
# annotations here are all valid at run time on Python 3.10).
import posix
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


def main(argv: list[str], end: bool = False) -> int:
    """One hook call (`[hook] --agent NAME`, the payload on stdin); always 0. END: the caller exits right
    after (the installed command, the console script), so that a call the daemon answered ends the process
    at once (`_end`)."""
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
        if end:
            _end()
        return 0
    return fallback(raw, argv, failure, time.monotonic() - started)


def ask(raw: bytes, argv: list[str], op: str = "hook",
        timeout: float = ANSWER_TIMEOUT) -> "tuple[dict[str, Any] | None, str | None]":
    """The daemon's answer to this call ({"out", "err"}, and what else the op answers: an exit `code`), or
    (None, why it failed) to run the call here; why is None where that is normal (no daemon, another work
    tree, an upgrade). OP: the daemon's request for it, `hook` (an agent's hook, hook.serve), `githook` (a
    git hook, githook.serve) or `undo` (a plain `git rewind undo ID --yes`, undocmd.serve). TIMEOUT: how
    long the answer is waited for."""
    from ..base import daemonlink, minijson

    if not daemonlink.supported():
        return None, None
    env = daemonlink.environment()
    if any(name in env for name in daemonlink.DISCOVERY_ENV):
        return None, None  # a GIT_DIR-style environment: the hook asks git
    cwd = posix.getcwd()  # agents run hooks in the project; the daemon checks the payload's own cwd
    found = daemonlink.layout_of(cwd)  # getcwd's path has its links resolved already
    if found is None:
        return None, None  # an unusual layout: the hook asks git
    sock = daemonlink.connect(found[1] + "/rewind", CONNECT_TIMEOUT)  # Repo(*found).rewind_dir
    if sock is None:
        return None, None
    request = {"op": op, "fingerprint": daemonlink.fingerprint(), "argv": argv,
               "payload": raw.decode("utf-8", "surrogateescape"), "cwd": cwd, "env": env,
               "umask": _umask(), "parent": posix.getppid()}
    try:
        got = minijson.loads(daemonlink.exchange(sock, minijson.dumps(request), timeout)[0])
    except TimeoutError:
        return None, f"the daemon did not answer within {timeout:g} s"
    except (OSError, ValueError) as exc:
        return None, f"the daemon did not answer ({exc})"
    finally:
        sock.close()
    if not isinstance(got, dict):
        return None, "the daemon's answer is not a JSON object"
    if isinstance(got.get("out"), str) and isinstance(got.get("err"), str):
        return got, None
    if "fallback" in got or got.get("stopping"):
        return None, None
    return None, f"the daemon answered {str(got)[:200]}"


def _umask() -> int:
    mask = posix.umask(0o022)
    posix.umask(mask)
    return mask


def _print(answer: dict[str, str]) -> None:
    for stream, text in ((sys.stdout, answer["out"]), (sys.stderr, answer["err"])):
        if text:
            try:
                stream.write(text)
                stream.flush()
            except (OSError, ValueError):  # closed: the agent goes on without it
                pass


def _end() -> None:
    """Exit status 0 at once, the output flushed: the daemon did the work, and nothing of this process needs
    the interpreter's finalization (it holds no child, lock or temporary file). Tearing down its modules and
    objects costs ~1.5 ms, as much as all of the client's imports."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    posix._exit(0)


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
    import os
    import site

    if sys.flags.no_user_site:  # -I says no; the console script decides as site does without it (a venv: no)
        site.ENABLE_USER_SITE = (not os.environ.get("PYTHONNOUSERSITE") and os.getuid() == os.geteuid()
                                 and os.getgid() == os.getegid())
    site.main()  # in its order: the user's site-packages before the system's, as the console script has them
    if sys.flags.ignore_environment and os.environ.get("PYTHONPATH"):
        extra = [os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p]
        sys.path[1:1] = [p for p in extra if p not in sys.path]
