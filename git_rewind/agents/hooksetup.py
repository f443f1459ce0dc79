"""An agent's hooks in its own settings files: where they go, what our entries run, writing and removing
exactly ours."""

from __future__ import annotations

from .identity import Identity, below

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .settingsfile import Change


TIMEOUT = 30  # seconds the agent gives our hook


class HookSetup(Identity):
    """Installing and removing our hook entries in the agent's settings."""

    def settings_file(self, scope: str, root: str | None, home: str) -> str:
        """The file our hooks go into at SCOPE (ROOT: the project's work tree)."""
        return below(scope, root, home, self.settings_path)

    def target(self, scope: str, root: str | None, home: str | None = None) -> str:
        """settings_file, after checking SCOPE is one of ours and a project scope has a work tree."""
        import os

        from ..base.errors import RewindError

        if scope not in self.scopes:
            raise RewindError(f"{self.name} has no {scope} scope (one of {', '.join(self.scopes)})")
        if scope != "user" and root is None:
            raise RewindError(f"--scope {scope} needs a git work tree; run it inside your project")
        return str(self.settings_file(scope, root, home or os.path.expanduser("~")))

    def handler(self, command: str) -> dict[str, Any]:
        """One hook handler running COMMAND."""
        return {"type": "command", "command": command, "timeout": TIMEOUT}

    def command(self, event_name: str | None, program: list[str] | None) -> str:
        """What our entry for EVENT_NAME runs: PROGRAM (absolute) + `hook --agent …`, or, with None, the
        form for a project's shared files, which answers as the hook would (hook_reply) where git-rewind
        is not installed. EVENT_NAME None: the command as `install` shows it."""
        import json

        from .settingsfile import hook_command

        reply = self.hook_reply(event_name)
        return hook_command(self.name, program, None if reply is None else json.dumps(reply, separators=(",", ":")))

    def entries(self, program: list[str] | None) -> dict[str, list[dict[str, Any]]]:
        """Our hook groups, event by event, in the Claude-style format (PROGRAM as for `command`)."""
        result: dict[str, list[dict[str, Any]]] = {}
        for event_name, matcher in self.hooks.items():
            group: dict[str, Any] = {}
            if matcher is not None:
                group["matcher"] = matcher
            group["hooks"] = [self.handler(self.command(event_name, program))]
            result[event_name] = [group]
        return result

    def seed(self, path: str) -> dict[str, Any]:
        """What a hooks file we create at PATH starts from (Droid carries over settings.json's hooks)."""
        return {}

    def install_hooks(self, scope: str, root: str | None, home: str | None, program: list[str] | None) -> Change:
        """Our hooks, running PROGRAM (None: the shared form, see `command`), into the settings file; a
        second install changes nothing."""
        path = self.target(scope, root, home)
        return self.write_hooks(path, program)

    def uninstall_hooks(self, scope: str, root: str | None, home: str | None) -> Change:
        """Remove exactly our hooks; a file we created and left empty goes too."""
        return self.remove_hooks(self.target(scope, root, home))

    def hooks_installed(self, path: str) -> bool:
        """The settings file PATH holds our hooks."""
        from .settingsfile import has_own_hooks

        return has_own_hooks(path, self.wrapped)

    def also_loaded(self, root: str | None, home: str) -> list[str]:
        """Files holding our hooks that the agent loads besides the ones install writes (ROOT: the project's work
        tree, None outside one): each runs every hook again, so `status` warns of them."""
        return []

    def write_hooks(self, path: str, program: list[str] | None) -> Change:
        """Our groups into the Claude-style hooks file PATH (after the others of each event)."""
        from .settingsfile import write_hooks

        return write_hooks(path, self.entries(program), self.wrapped, lambda: self.seed(path), self.agent_keys)

    def remove_hooks(self, path: str) -> Change:
        """Our groups out of the Claude-style hooks file PATH."""
        from .settingsfile import remove_hooks

        return remove_hooks(path, self.wrapped, self.agent_keys)

    def template(self) -> dict[str, Any]:
        """The readable hooks/<agent>/ file: what `install --scope project` writes (the shared command)."""
        hooks = self.entries(None)
        return {"hooks": hooks} if self.wrapped else dict(hooks)

    def readable_files(self) -> dict[str, bytes]:
        """Name under hooks/<agent>/ → content: the readable copies of what install writes."""
        import json
        import os

        name = os.path.basename(self.settings_file("user", None, ""))
        return {name: (json.dumps(self.template(), indent=2) + "\n").encode()}

    def slash_commands(self) -> dict[str, bytes]:
        """File name → content of the slash commands install copies beside the settings file."""
        return {}
