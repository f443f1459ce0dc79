"""`git rewind web`: a local page over this work tree's checkpoints (Starlette on uvicorn, 127.0.0.1 only).

Imported only by the `web` command: the hook's path never loads the web libraries.
"""

from __future__ import annotations

import signal
import socket
import sys

from ...base.repo import Repo


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:PORT (0: any free port), for uvicorn.

    Made as IPPROTO_TCP by name: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections of such a
    socket, and uvicorn writes an answer's headers and its body in two sends, so with Nagle on every answer's body
    waited for the browser's delayed acknowledgement of the headers: 40 ms on Linux, for each of the launch-token
    exchange, the first screen's requests and a click's detail."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        from ...base.errors import RewindError

        raise RewindError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    sock.listen(128)
    return sock


def serve(repo: Repo, port: int = 0, open_browser: bool = True, read_only: bool = False) -> int:
    """Serve until Ctrl-C or SIGTERM; the first line printed is the page's link with a one-time launch token,
    and each time a browser uses one, a line with the next link (for another tab). Exit code 0."""
    import uvicorn

    from ...store import checkpoints
    from .app import build
    from .guard import Keys

    checkpoints.LONG_LIVED = True  # it reads the notes again at each change: no read may pin garbage for good

    sock = listen(port)  # from now on a request waits in the backlog: the URL below is good at once
    bound = sock.getsockname()[1]

    def link(launch: str) -> str:
        return f"http://127.0.0.1:{bound}/#launch={launch}"

    def announce(launch: str) -> None:
        try:
            print(f"opened in a browser; for another tab: {link(launch)}", flush=True)
        except (OSError, ValueError):  # nobody reads our output any more: the page opened all the same
            pass

    keys = Keys(announce)
    url = link(keys.launch)
    print(url, flush=True)
    app = build(repo, keys, bound, read_only)  # it starts reading the checkpoints meanwhile
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    if open_browser:
        import webbrowser

        webbrowser.open(url)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # uvicorn handles both signals itself, then raises them again once it has stopped: ours turn that
    # last one into a quiet exit 0 (SIGTERM's default would kill the process with status -15).
    signal.signal(signal.SIGTERM, stop)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    print("stopped", file=sys.stderr, flush=True)
    return 0
