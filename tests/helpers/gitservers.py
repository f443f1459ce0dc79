"""Real git servers on 127.0.0.1, started and stopped by the tests themselves.

Three ways a remote is reached, each a small class of one shape (GitServer):
- GitDaemon: `git daemon` with receive-pack enabled (git://127.0.0.1:PORT/repo.git).
- HttpServer: git's smart HTTP, `git http-backend` as a CGI behind Debian's lighttpd (http://…/git/repo.git).
- SshServer: Debian's OpenSSH `sshd` with a throwaway host key and client key (ssh://USER@127.0.0.1:PORT/abs/path).

Each serves one bare repository (`bare`: a test reads every byte the server holds with `leaks`), gives the
URL to push to and the environment a client needs (`env`), can be killed mid-push and started again on the
same port (`kill`, `start`), and takes a pre-receive hook (`install_hook`, `reject`). `stop` leaves no process
behind. When a test fails, the logs of the servers it ran are printed under it.

Fixtures (registered by tests/conftest.py): git_daemon, http_server, ssh_server, and any_server (each in turn).
A server whose program is missing skips the test, naming the command that installs it (tests/helpers/needs.py;
under CI=true that fails it: .ci/run installs them).
"""

from __future__ import annotations

import functools
import os
import pwd
import re
import shlex
import signal
import socket
import subprocess
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import needs
from .procs import alive, listens, processes, tree

HANG = 60.0  # seconds: a git command against these servers that takes longer hangs
READY = 20.0  # seconds a server gets to answer its first `git ls-remote`
LOG_TAIL = 80  # lines of each log shown under a failed test

_live: list[GitServer] = []  # started and not yet stopped: whose logs a failed test shows


def free_port() -> int:
    """A TCP port nobody listens on right now (the kernel's choice); `start` tries again if it is taken meanwhile."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _PortTaken(Exception):
    """The server could not bind its port: someone took it between free_port and the server's bind."""


def _die_with_parent() -> None:
    """In the server's process before exec: SIGKILL it if the test process dies (no server outlives pytest)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class GitServer:
    """One server process serving one bare repository on 127.0.0.1 (a subclass says which and how)."""

    kind = ""  # the fixture's id: "git-daemon", "http", "ssh"
    requires = ""  # what the server needs beyond git (tests/helpers/needs.py): missing, the test is skipped
    program = ""  # the server's executable, found on PATH or in the sbin directories

    def __init__(self, root: Path) -> None:
        if self.requires:
            needs.need(self.requires)
        self.root = root
        self.home = root / "home"  # HOME of every server-side git: no user config from this machine
        self.srv = root / "srv"
        self.bare = self.srv / "repo.git"
        self.log_path = root / "server.log"
        self.port = 0
        self._log_start = 0  # where this start's part of the log begins
        self.proc: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {"GIT_TERMINAL_PROMPT": "0"}  # what a client adds to its environment
        self.home.mkdir(parents=True)
        self.srv.mkdir()
        self.git("init", "--bare", "-q", "-b", "main", str(self.bare), cwd=self.srv)
        self.setup()

    # ---- what a subclass says
    @property
    def url(self) -> str:
        """The remote's URL as `git push` takes it."""
        raise NotImplementedError

    def setup(self) -> None:
        """Once, after the bare repository exists: keys, repository config, the client's environment."""

    def write_config(self) -> None:
        """Before each start, once the port is known: the server's configuration file."""

    def command(self) -> list[str]:
        """The server's command line, in the foreground, logging to stderr."""
        raise NotImplementedError

    @property
    def binary(self) -> str:
        """Where the server's executable is."""
        found = needs.find(self.program)
        assert found, f"{self.program} is missing"  # __init__ skipped the test
        return found

    # ---- the common part
    def server_env(self) -> dict[str, str]:
        """The environment of the server process (and so of its git): nothing of the tests' or the user's git."""
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C.UTF-8"}

    def git(self, *args: str, cwd: Path | None = None, check: bool = True) -> str:
        """git on the server's side (in the bare repository unless CWD), as the server's own git would run."""
        proc = subprocess.run(["git", *args], cwd=cwd or self.bare, env=self.server_env(), capture_output=True,
                              timeout=HANG)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed in {cwd or self.bare}: {proc.stderr.decode()}")
        return proc.stdout.decode(errors="surrogateescape")

    def client_env(self, env: dict[str, str]) -> dict[str, str]:
        """ENV plus what a client of this server needs."""
        return {**env, **self.env}

    def start(self) -> GitServer:
        """Start the server (again after `kill`, on the same port); return once a client's `git ls-remote` works."""
        assert self.proc is None or self.proc.poll() is not None, f"{self.kind} server already running"
        fresh = self.port == 0
        for _attempt in range(5):
            if fresh:
                self.port = free_port()
            self.write_config()
            with open(self.log_path, "ab") as log:
                self._log_start = log.tell()
                log.write(f"==== {' '.join(self.command())} (port {self.port})\n".encode())
                log.flush()
                self.proc = subprocess.Popen(self.command(), cwd=self.root, env=self.server_env(),
                                             stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                             start_new_session=True, preexec_fn=_die_with_parent)
            if self not in _live:
                _live.append(self)
            try:
                self._wait_ready()
                return self
            except _PortTaken:
                self.kill()
                if not fresh:
                    raise AssertionError(f"{self.kind} server: port {self.port} taken, cannot restart on it:\n"
                                         f"{self.log_tail()}") from None
        raise AssertionError(f"{self.kind} server: no free port after 5 tries:\n{self.log_tail()}")

    def _wait_ready(self) -> None:
        """Until this server's processes themselves listen on the port (someone else on it does not count), then
        until a client's `git ls-remote` gets through it."""
        assert self.proc is not None
        deadline = time.monotonic() + READY
        while not any(listens(pid, self.port) for pid in tree(self.proc.pid)):
            if self.proc.poll() is not None:
                if self._port_taken():
                    raise _PortTaken
                raise AssertionError(f"{self.kind} server exited ({self.proc.returncode}) before it listened "
                                     f"on port {self.port}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.kind} server: not listening on port {self.port} after {READY:.0f} s:\n"
                                     f"{self.log_tail()}")
            time.sleep(0.02)
        probe = subprocess.run(["git", "ls-remote", self.url], env=self.client_env(self.server_env()),
                               capture_output=True, timeout=READY)
        if probe.returncode != 0:
            raise AssertionError(f"git ls-remote {self.url} failed: {probe.stderr.decode()}\n{self.log_tail()}")

    def wait_for_pack_reader(self, timeout: float = HANG) -> bool:
        """Wait until the server runs the git that reads a pushed pack (unpack-objects or index-pack): a push
        is then in flight. False if none ran within TIMEOUT seconds."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pid in tree(self.proc.pid):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        argv = fh.read().split(b"\0")
                except OSError:
                    continue
                if b"unpack-objects" in argv or b"index-pack" in argv:
                    return True
            time.sleep(0.005)
        return False

    def _port_taken(self) -> bool:
        """This start's log says the port was taken (git daemon, lighttpd and sshd each say it their way)."""
        with open(self.log_path, "rb") as log:
            log.seek(self._log_start)
            said = log.read().decode(errors="replace")
        return re.search(r"in use|cannot bind|unable to allocate any listen", said, re.IGNORECASE) is not None

    def kill(self) -> None:
        """SIGKILL the server and everything it started (a connection's sshd, a CGI, a receive-pack) at once,
        as a crash or a pulled plug would: what a client had in flight gets no answer."""
        if self.proc is None or self.proc.poll() is not None:  # a reaped pid may be someone else's by now
            return
        pids: list[int] = []
        while True:  # stop the whole tree first, so nothing forks or reparents while it is killed
            found = [pid for pid in tree(self.proc.pid) if pid not in pids]
            if not found:
                break
            for pid in found:
                _signal(pid, signal.SIGSTOP)
            pids.extend(found)
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        self.proc.wait(timeout=HANG)
        deadline = time.monotonic() + HANG
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self) -> None:
        """Kill the server, and fail if any process of it is left (anything running under its directory)."""
        self.kill()
        if self in _live:
            _live.remove(self)
        root = str(self.root)
        left = [(pid, argv) for pid, argv, cwd in processes()
                if pid != os.getpid() and alive(pid)
                and (cwd == root or cwd.startswith(root + "/") or any(root.encode() in arg for arg in argv))]
        for pid, _argv in left:
            _signal(pid, signal.SIGKILL)
        assert not left, f"{self.kind} server left processes: {[b' '.join(argv).decode() for _, argv in left]}"

    def log(self) -> str:
        """Everything the server wrote (over all its starts)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = LOG_TAIL) -> str:
        return "\n".join(self.log().splitlines()[-lines:])

    # ---- the repository
    def install_hook(self, name: str, script: str) -> Path:
        """Make SCRIPT (with its #! line) the bare repository's hook NAME."""
        path = self.bare / "hooks" / name
        path.write_text(script)
        path.chmod(0o755)
        return path

    def reject(self, message: str) -> None:
        """A pre-receive hook that refuses every push, saying MESSAGE on stderr (the client shows it as remote:)."""
        self.install_hook("pre-receive", f"#!/bin/sh\ncat >/dev/null\necho {shlex.quote(message)} >&2\nexit 1\n")

    def refs(self) -> dict[str, str]:
        """Every ref the server has: name → object id."""
        out = self.git("for-each-ref", "--format=%(objectname) %(refname)")
        return {name: oid for oid, name in (line.split(" ", 1) for line in out.splitlines())}

    def objects(self) -> bytes:
        """Every object of the bare repository in full, as `git cat-file --batch-all-objects --batch` prints them."""
        proc = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=self.bare,
                              env=self.server_env(), capture_output=True, timeout=HANG, check=True)
        return proc.stdout

    def stored(self) -> Iterator[bytes]:
        """Every byte the server holds, readable: its objects in full, then each file of the bare repository,
        inflated where it is a loose object or a pack (a quarantined or half-received one too), raw otherwise."""
        yield self.objects()
        for dirpath, _dirnames, filenames in os.walk(self.bare):
            for name in filenames:
                data = (Path(dirpath) / name).read_bytes()
                if data.startswith(b"PACK"):
                    yield from pack_entries(data)
                elif re.fullmatch(r"[0-9a-f]{38}|[0-9a-f]{62}", name) and "objects" in Path(dirpath).parts:
                    yield _inflate(data)
                else:
                    yield data

    def leaks(self, *secrets: str | bytes) -> list[str | bytes]:
        """Those of SECRETS found anywhere in what the server holds (see `stored`)."""
        wanted = {s: s.encode() if isinstance(s, str) else s for s in secrets}
        found: set[str | bytes] = set()
        for chunk in self.stored():
            found.update(s for s, raw in wanted.items() if raw in chunk)
        return [s for s in secrets if s in found]


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _inflate(data: bytes) -> bytes:
    """As much of zlib stream DATA as inflates (a file cut short by a kill gives its beginning)."""
    try:
        return zlib.decompressobj().decompress(data)
    except zlib.error:
        return b""


def pack_entries(data: bytes, oid_size: int = 20) -> Iterator[bytes]:
    """The inflated data of each entry of pack file DATA, in order, as far as the file goes (a push killed
    midway leaves a pack cut short). A delta's data holds the bytes it inserts, so a secret shows there too."""
    view = memoryview(data)
    pos = 12  # "PACK", version, object count
    try:
        while pos < len(data) - oid_size:
            byte = data[pos]
            pos += 1
            kind = (byte >> 4) & 7
            while byte & 0x80:
                byte = data[pos]
                pos += 1
            if kind == 6:  # ofs-delta: the base's offset, a varint
                while data[pos] & 0x80:
                    pos += 1
                pos += 1
            elif kind == 7:  # ref-delta: the base's object id
                pos += oid_size
            inflater = zlib.decompressobj()
            parts = []
            while not inflater.eof and pos < len(data):
                chunk = view[pos:pos + 65536]
                parts.append(inflater.decompress(chunk))
                pos += len(chunk)
            yield b"".join(parts)
            if not inflater.eof:
                return
            pos -= len(inflater.unused_data)
    except (IndexError, zlib.error):
        return


class GitDaemon(GitServer):
    """`git daemon` with receive-pack enabled, serving the bare repository as git://127.0.0.1:PORT/repo.git."""

    kind = "git-daemon"

    @property
    def binary(self) -> str:
        """git-daemon itself, not `git daemon`: the git in front would die alone if pytest did (PDEATHSIG)."""
        return os.path.join(_exec_path(), "git-daemon")

    @property
    def url(self) -> str:
        return f"git://127.0.0.1:{self.port}/repo.git"

    def command(self) -> list[str]:
        return [self.binary, "--listen=127.0.0.1", f"--port={self.port}", f"--base-path={self.srv}",
                "--export-all", "--enable=receive-pack", "--reuseaddr", "--informative-errors", "--verbose"]


class HttpServer(GitServer):
    """git's smart HTTP: `git http-backend` as a CGI behind Debian's lighttpd, no authentication (so the
    repository says `http.receivepack true`), serving http://127.0.0.1:PORT/git/repo.git."""

    kind = "http"
    requires = program = "lighttpd"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/git/repo.git"

    def setup(self) -> None:
        self.backend = Path(_exec_path()) / "git-http-backend"
        assert os.access(self.backend, os.X_OK), f"{self.backend} is missing (Debian's git has it)"
        self.git("config", "http.receivepack", "true")
        (self.root / "www").mkdir()
        (self.root / "uploads").mkdir()
        self.conf = self.root / "lighttpd.conf"

    def write_config(self) -> None:
        def q(value: object) -> str:
            return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'

        env = {"GIT_PROJECT_ROOT": self.srv, "GIT_HTTP_EXPORT_ALL": "", **self.server_env()}
        self.conf.write_text("\n".join([
            'server.modules = ("mod_alias", "mod_cgi", "mod_setenv", "mod_accesslog")',
            'server.bind = "127.0.0.1"',
            f"server.port = {self.port}",
            f"server.document-root = {q(self.root / 'www')}",
            f"server.upload-dirs = ({q(self.root / 'uploads')})",
            f"accesslog.filename = {q(self.root / 'access.log')}",
            # a big push comes chunked, and a CGI needs its length: lighttpd keeps the whole body in
            # upload-dirs before it starts git http-backend (streaming it answers such a push 411)
            f"alias.url = ({q('/git')} => {q(self.backend)})",
            '$HTTP["url"] =~ "^/git" {',
            '    cgi.assign = ("" => "")',
            "    setenv.set-environment = (" + ", ".join(f"{q(k)} => {q(v)}" for k, v in env.items()) + ")",
            "}",
            "",
        ]))

    def command(self) -> list[str]:
        return [self.binary, "-D", "-f", str(self.conf)]

    def log(self) -> str:
        access = self.root / "access.log"
        requests = access.read_text(errors="replace") if access.exists() else ""
        return super().log() + ("\n---- access.log\n" + requests if requests else "")


class SshServer(GitServer):
    """Debian's OpenSSH sshd with a throwaway host key, letting in one throwaway client key as the user the
    tests run as (root in CI); the client runs git-upload-pack/git-receive-pack with the bare repository's
    absolute path: ssh://USER@127.0.0.1:PORT/abs/path/repo.git."""

    kind = "ssh"
    requires = program = "sshd"

    @property
    def url(self) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{self.bare}"

    def setup(self) -> None:
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.host_key = self.root / "ssh_host_ed25519_key"
        self.client_key = self.root / "client_ed25519_key"
        for key in (self.host_key, self.client_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"git-rewind test {key.name}",
                            "-f", str(key)], check=True, capture_output=True, timeout=HANG)
        self.authorized_keys = self.root / "authorized_keys"
        self.authorized_keys.write_bytes(self.client_key.with_suffix(".pub").read_bytes())
        self.conf = self.root / "sshd_config"
        if os.geteuid() == 0:  # sshd as root insists on its privilege separation directory
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        ssh = ["ssh", "-F", "/dev/null", "-i", str(self.client_key), "-o", "IdentitiesOnly=yes",
               "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
               "-o", "LogLevel=ERROR"]
        self.env.update(GIT_SSH_COMMAND=shlex.join(ssh), GIT_SSH_VARIANT="ssh")

    def write_config(self) -> None:
        lines = [
            "ListenAddress 127.0.0.1",
            f"Port {self.port}",
            f"HostKey {self.host_key}",
            f"PidFile {self.root / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            "StrictModes no",
            "UsePAM no",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "AllowTcpForwarding no",
            "X11Forwarding no",
            "PermitTTY no",
            "PrintMotd no",
            "UseDNS no",
            "MaxStartups 100",
            # the session's git reads no config of this machine's user (root's ~/.gitconfig in CI)
            "SetEnv " + " ".join(f'"{k}={v}"' for k, v in self.server_env().items() if k != "PATH"),
        ]
        if _openssh_version() >= (9, 8):  # its penalties would refuse connections after a test kills some
            lines.append("PerSourcePenalties no")
        self.conf.write_text("\n".join(lines) + "\n")

    def command(self) -> list[str]:
        return [self.binary, "-D", "-e", "-f", str(self.conf)]


@functools.cache
def _exec_path() -> str:
    """Where git keeps its programs (git-daemon, git-http-backend): /usr/lib/git-core on Debian."""
    return subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout.strip()


def _openssh_version() -> tuple[int, int]:
    out = subprocess.run([needs.find("sshd") or "sshd", "-V"], capture_output=True, text=True, timeout=HANG)
    match = re.search(r"OpenSSH_(\d+)\.(\d+)", out.stdout + out.stderr)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


SERVERS: dict[str, type[GitServer]] = {cls.kind: cls for cls in (GitDaemon, HttpServer, SshServer)}


def serve(kind: str, root: Path) -> Iterator[GitServer]:
    """A running server of KIND under ROOT for the span of the iteration; stopped (nothing left) after."""
    server = SERVERS[kind](root)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def git_daemon(tmp_path: Path) -> Iterator[GitServer]:
    """`git daemon` with receive-pack enabled, on a free port of 127.0.0.1."""
    yield from serve("git-daemon", tmp_path / "server-git-daemon")


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[GitServer]:
    """git http-backend behind lighttpd, on a free port of 127.0.0.1."""
    yield from serve("http", tmp_path / "server-http")


@pytest.fixture
def ssh_server(tmp_path: Path) -> Iterator[GitServer]:
    """OpenSSH sshd with throwaway keys, on a free port of 127.0.0.1."""
    yield from serve("ssh", tmp_path / "server-ssh")


_FIXTURES = {"git-daemon": "git_daemon", "http": "http_server", "ssh": "ssh_server"}


@pytest.fixture(params=list(_FIXTURES))
def any_server(request: pytest.FixtureRequest) -> GitServer:
    """Each of the three servers in turn."""
    server: GitServer = request.getfixturevalue(_FIXTURES[request.param])
    return server


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under a failed test, the logs of the servers running for it."""
    report = yield
    if report.failed:  # type: ignore[attr-defined]
        for server in _live:
            report.sections.append((f"{server.kind} server log ({server.root})",  # type: ignore[attr-defined]
                                    server.log_tail()))
    return report
