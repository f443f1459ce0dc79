"""Kilo Code CLI: OpenCode's fork, so OpenCode's implementation (agents/opencode.py) with Kilo's names, and
the one rule of its own: our plugin in one place only.

Facts (shared/agents/kilo-aider.md A, @kilocode/cli 7.7.7): Kilo loads `{plugin,plugins}/*.{ts,js}` from
every config directory: $XDG_CONFIG_HOME/kilo (~/.config/kilo), ~/.kilo, ~/.kilocode, $KILO_CONFIG_DIR (an
extra directory, not a replacement) and the project's .kilo/ and .kilocode/ (never .opencode/). A plugin
in two of them runs twice, so every hook would run twice: install writes .kilo/plugin/ (project) or
$XDG_CONFIG_HOME/kilo/plugin/ (user), refuses while a copy of ours sits in another directory of the same
scope, and says so when the other scope has one too; `status` shows every such copy.

Sessions live in ~/.local/share/kilo/kilo.db, never touched: a rewind forks through Kilo's server
(`kilo serve --pure`, which prints "kilo server listening on http://…"), as for OpenCode; `kilo -s ses_…`
(the TUI, or `kilo run -s ses_… "…"`) resumes.
"""

from __future__ import annotations

import os

from .opencode import OpenCodeFamily

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class Kilo(OpenCodeFamily):
    """Kilo: the plugin in .kilo/plugin/ or $XDG_CONFIG_HOME/kilo/plugin/, and nowhere else it loads from."""

    name = "kilo"
    title = "Kilo"
    program = "kilo"
    config_name = "kilo"
    project_dir = ".kilo"
    # The server a rewind starts reads sessions only: without the project's config it does not begin the npm
    # install Kilo runs for every folder holding a plugin, which, cut short when the server is stopped, made
    # the next `kilo` start wait a minute (measured in tests/test_e2e_kilo.py).
    server_env = {"KILO_DISABLE_PROJECT_CONFIG": "1"}

    def plugin_dirs(self, scope: str, root: str | None, home: str,
                    environ: Mapping[str, str] | None = None) -> list[str]:
        """Every directory Kilo loads plugins from at SCOPE, the one install writes first."""
        env = os.environ if environ is None else environ
        if scope == "user":
            config = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
            dirs = [os.path.join(config, "kilo"), os.path.join(home, ".kilo"), os.path.join(home, ".kilocode")]
            if env.get("KILO_CONFIG_DIR"):
                dirs.append(os.path.abspath(os.path.expanduser(env["KILO_CONFIG_DIR"])))
        else:
            assert root is not None
            dirs = [os.path.join(root, ".kilo"), os.path.join(root, ".kilocode")]
        found: list[str] = []
        for folder in dirs:
            found += [os.path.join(folder, sub) for sub in ("plugin", "plugins")
                      if os.path.join(folder, sub) not in found]
        return found

    def copies(self, scope: str, root: str | None, home: str) -> list[str]:
        """Our plugin wherever Kilo loads it at SCOPE but where install puts it: each runs every hook again."""
        target = self.settings_file(scope, root, home)
        found = []
        for folder in self.plugin_dirs(scope, root, home):
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if name.endswith((".ts", ".js")) and path != target and os.path.isfile(path) \
                        and self.hooks_installed(path):
                    found.append(path)
        return found

    def check_install(self, scope: str, root: str | None, home: str, path: str) -> list[str]:
        """Refuse while our plugin sits in another of SCOPE's directories (Kilo would run both); tell when the
        other scope has it too (both run: every hook twice, the second call finding nothing new)."""
        from ..base.errors import RewindError

        here = self.copies(scope, root, home)
        if here:
            raise RewindError(f"git-rewind's plugin is already in {here[0]}, which Kilo also loads: a second copy "
                              f"would run every hook twice; remove that one (or keep it) instead of installing "
                              f"into {path}")
        other = "project" if scope == "user" else "user"
        if other == "project" and root is None:
            return []
        there = self.copies(other, root, home)
        installed = self.settings_file(other, root, home)
        if self.hooks_installed(installed):
            there.insert(0, installed)
        return [f"note: git-rewind's plugin is also installed at {other} scope ({p}); Kilo loads both, so every "
                "hook runs twice" for p in there[:1]]

    def also_loaded(self, root: str | None, home: str) -> list[str]:
        """When Kilo loads our plugin more than once (ROOT: the project, None outside one), every copy but the
        first it loads (the user's config folder first): status warns of each. One copy anywhere is no
        warning."""
        loaded = []
        for scope in ("user", "project") if root is not None else ("user",):
            target = self.settings_file(scope, root, home)
            loaded += ([target] if self.hooks_installed(target) else []) + self.copies(scope, root, home)
        return loaded[1:]


AGENT = Kilo()


def detect(payload: Mapping[str, Any], environ: Mapping[str, str]) -> int | None:
    """Our plugin, loaded by Kilo: it names its host (agents.detect)."""
    from .base import OWN_PAYLOAD
    from .opencode import plugin_payload

    return OWN_PAYLOAD + 1 if plugin_payload(payload) and payload.get("host") == "kilo" else None
