"""Making `git rewind --help` find the manual page whatever installed git-rewind.

git turns `git rewind --help` into `git help rewind`, which runs `man git-rewind` and never reaches
us. man finds a page beside a command through PATH: for each directory on it, `<dir>/../share/man`.
A virtualenv or `pip install --user` puts the page there (`share/man/man1`, the package's data
files). pipx before 1.5 (Debian 12, Ubuntu 22.04 and 24.04) links only the command into a bin
directory (~/.local/bin), so man looks in ~/.local/share/man and finds nothing. So
each `git rewind` command (not the hook, not the MCP server) reached through such a link puts a
link to the installed page there, as pipx 1.5 and later do themselves: one lstat when git-rewind
is not run through a link, a few when it is and the page is already found.
"""

from __future__ import annotations

import os
import sys

PAGE = "git-rewind.1"


def installed_page(prefix: str | None = None) -> str:
    """Where this installation's page is: <prefix>/share/man/man1 (the package's data files)."""
    return os.path.join(prefix or sys.prefix, "share", "man", "man1", PAGE)


def link_beside(command: str | None = None, prefix: str | None = None) -> str | None:
    """When COMMAND (default: how we were run) is a link in a bin directory whose ../share/man lacks our
    page, link the installed page there; the link made, else None. Never replaces a page that works
    (pipx's own, a user's), only a dangling link to one; never fails the command it runs in."""
    command = sys.argv[0] if command is None else command
    try:
        if not command or not os.path.islink(command):
            return None  # run from where it was installed: man finds <bin>/../share/man already
        page = installed_page(prefix)
        folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(command))), "share", "man", "man1")
        link = os.path.join(folder, PAGE)
        if os.path.exists(link) or not os.path.isfile(page):
            return None
        if os.path.islink(link):  # dangling: a removed or moved installation's
            os.unlink(link)
        os.makedirs(folder, exist_ok=True)
        os.symlink(page, link)
        return link
    except OSError:
        return None
