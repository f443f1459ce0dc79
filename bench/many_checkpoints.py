"""A repository with many checkpoints, built in seconds: for the web benches (server and page).

    from many_checkpoints import build
    build("/tmp/r10k", 10_000)          # or: python bench/many_checkpoints.py /tmp/r10k 10000

One `git fast-import` stream writes a first commit on main, the checkpoints as chains of commits
on refs/rewind/<session> (several sessions of different agents, interleaved in time, each
checkpoint changing one or two of 200 files) and one note per checkpoint in refs/notes/rewind,
written by note.Note as store.py writes them (prompts, tags, origins, a few safety checkpoints).
The work tree is then checked out at main. `git rewind list` reads them as any others.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from git_rewind.base.note import Note, Position, RewindRecord  # noqa: E402

AGENTS = ("claude-code", "codex", "gemini", "opencode", None)
TOOLS = ("Edit", "Write", "Bash", "MultiEdit")
FILES = 200
PROMPTS = ("add error handling to the parser", "make the tests pass", "rename the config loader",
           "speed up the list command", "write docs for the web page", "fix the flaky watcher test")


def _data(raw: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(raw), raw)


def _note(seq: int, session: str, stamp: str, agent: str | None, trigger: str, tool: str, changed: list[str],
          message: str) -> Note:
    rewind = RewindRecord(seq - 5, None, [], "code") if seq % 500 == 0 and seq > 5 else None
    return Note(seq, session, stamp, agent=agent, trigger="pre-rewind" if rewind else trigger,
                tool=tool if agent else None, paths=changed, message=message,
                prompt=PROMPTS[seq % len(PROMPTS)] if agent else None,
                tags=["good"] if seq % 97 == 0 else [], branch="main",
                conversation=Position(f"/home/u/.{agent}/{session}.jsonl", f"p{seq}", f"toolu_{seq}",
                                      offset=seq * 100) if agent else None,
                origins={name: "agent" if agent else "outside" for name in changed}, rewind=rewind)


def build(path: str, count: int, sessions: int = 12, span_hours: float = 72.0, now: float | None = None,
          files: int = FILES) -> str:
    """PATH: a new repository of FILES files with COUNT checkpoints in SESSIONS sessions over the last
    SPAN_HOURS. PATH."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True, env=env)
    now = time.time() if now is None else now
    start = int(now - span_hours * 3600)
    step = span_hours * 3600 / max(count, 1)
    out = bytearray()
    out += b"commit refs/heads/main\nmark :1\ncommitter bench <bench@example.com> %d +0000\n" % start
    out += _data(b"init")
    for f in range(files):
        out += b"M 100644 inline src/mod%03d.py\n" % f + _data(b"".join(b"line %d of module %d\n" % (i, f)
                                                                        for i in range(40)))
    names = [f"{'%08x' % (0x4f9e0000 + s)}-bench-session-{s}" for s in range(sessions)]
    last: dict[str, int] = {}
    notes: list[tuple[int, bytes]] = []
    for seq in range(1, count + 1):
        s = (seq * 7 // 50) % sessions  # runs of ~7 checkpoints per session, interleaved
        session = names[s]
        when = int(start + seq * step)
        agent = AGENTS[s % len(AGENTS)]
        tool = TOOLS[seq % len(TOOLS)]
        changed = [f"src/mod{(seq * 13) % files:03d}.py"] + ([f"src/mod{(seq * 29) % files:03d}.py"] if seq % 3 == 0
                                                             else [])
        trigger = "UserPromptSubmit" if seq % 7 == 0 else "PreToolUse"
        message = f"before {tool} {changed[0]}" if trigger == "PreToolUse" else "prompt"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
        mark = seq + 1
        out += b"commit refs/rewind/%s\nmark :%d\ncommitter bench <bench@example.com> %d +0000\n" % (
            session.encode(), mark, when)
        out += _data(f"#{seq} {message}".encode())
        out += b"from :%d\n" % last.get(session, 1)
        for name in changed:
            out += b"M 100644 inline %s\n" % name.encode() + _data(b"changed by checkpoint %d\n" % seq)
        last[session] = mark
        notes.append((mark, _note(seq, session, stamp, agent, trigger, tool, changed, message).to_bytes()))
    out += b"commit refs/notes/rewind\ncommitter bench <bench@example.com> %d +0000\n" % int(now)
    out += _data(b"Notes added by 'git notes add'")
    for mark, body in notes:
        out += b"N inline :%d\n" % mark + _data(body)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=bytes(out), check=True, env=env)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True, env=env)
    return path


def build_fetched(path: str, remote: str = "team", machines: int = 50, per_machine: int = 1_000,
                  sessions: int = 40, span_hours: float = 72.0) -> str:
    """PATH: a new repository holding what `git rewind fetch REMOTE` brings from MACHINES machines of
    PER_MACHINE checkpoints each (SESSIONS sessions a machine): a copy commit per checkpoint and one notes ref per
    machine, refs/notes/rewind-remote/<REMOTE>/machineNN, whose notes are redacted notes as share.py writes them
    (with `shared`), and a `transcripts/` entry beside them. One fast-import stream, no push and no fetch:
    50,000 in ~15 s. PATH."""
    import json

    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True, env=env)
    start = int(time.time() - span_hours * 3600)
    step = span_hours * 3600 / max(per_machine, 1)
    out = bytearray()
    out += b"commit refs/heads/main\nmark :1\ncommitter bench <bench@example.com> %d +0000\n" % start
    out += _data(b"init") + b"M 100644 inline README\n" + _data(b"a project\n")
    mark = 1
    for m in range(machines):
        name = f"machine{m:02d}"
        notes: list[tuple[int, bytes]] = []
        for seq in range(1, per_machine + 1):
            session = f"{m:04x}{seq * 7 // 50 % sessions:04x}-fetched-session"
            when = int(start + seq * step)
            agent = AGENTS[seq % (len(AGENTS) - 1)]
            tool = TOOLS[seq % len(TOOLS)]
            changed = [f"src/mod{(seq * 13) % FILES:03d}.py"]
            trigger = "UserPromptSubmit" if seq % 7 == 0 else "PreToolUse"
            message = f"before {tool} {changed[0]}" if trigger == "PreToolUse" else "prompt"
            mark += 1
            out += b"commit refs/bench-copies/%s\nmark :%d\ncommitter bench <bench@example.com> %d +0000\n" % (
                name.encode(), mark, when)
            out += _data(f"#{seq} {message}".encode())
            out += b"from :%d\n" % (mark - 1 if seq > 1 else 1)
            out += b"M 100644 inline %s\n" % changed[0].encode() + _data(b"%s %d\n" % (name.encode(), seq))
            data = _note(seq, session, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)), agent, trigger, tool,
                         changed, message).to_json()
            data["conversation"] = {**data["conversation"], "transcript": None}
            data["shared"] = {"by": name, "user": "bench", "transcript": None, "left_out": [], "redactions": 0,
                              "times": {}, "scanner": 1}
            notes.append((mark, (json.dumps(data, indent=1) + "\n").encode()))
        out += b"commit refs/notes/rewind-remote/%s/%s\ncommitter bench <bench@example.com> %d +0000\n" % (
            remote.encode(), name.encode(), int(time.time()))
        out += _data(b"machine copy") + b"M 100644 inline transcripts/s.jsonl\n" + _data(b"{}\n")
        for copy, body in notes:
            out += b"N inline :%d\n" % copy + _data(body)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=bytes(out), check=True, env=env)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True, env=env)
    subprocess.run(["git", "remote", "add", remote, "https://example.com/team.git"], cwd=path, check=True, env=env)
    return path


if __name__ == "__main__":
    started = time.perf_counter()
    build(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10_000)
    print(f"built {sys.argv[1]} in {time.perf_counter() - started:.1f} s")
