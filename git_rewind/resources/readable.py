"""The readable copies under hooks/<agent>/, generated from the one source install uses.

What every agent's `readable_files` says install writes (its hooks file with the bare command,
and the files shipped in resources/: Claude Code's slash commands, OpenCode's plugin). After a
change to an agent's hooks or to a shipped file, regenerate them; a test checks there is no diff:

    python -m git_rewind.resources.readable           # rewrites hooks/<agent>/ in this checkout
    python -m git_rewind.resources.readable --check   # exit 1 and the differing files, changing nothing
"""

from __future__ import annotations

import os
import sys

from .. import agents

# hooks/ beside the package, in a checkout (an installed package has none).
HOOKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "hooks")
NOT_GENERATED = {"README.md"}


def files() -> dict[str, bytes]:
    """<agent>/<name> → content of every readable copy."""
    return {f"{name}/{file}": data for name in agents.NAMES
            for file, data in agents.get(name).readable_files().items()}


def differences(directory: str = HOOKS_DIR) -> list[str]:
    """The files under DIRECTORY that are missing, differ, or are not generated (README.md aside)."""
    expected = files()
    found = set()
    for folder, _dirs, names in os.walk(directory):
        for name in names:
            found.add(os.path.relpath(os.path.join(folder, name), directory).replace(os.sep, "/"))
    wrong = sorted(found - expected.keys() - NOT_GENERATED)
    for name, data in sorted(expected.items()):
        try:
            with open(os.path.join(directory, name), "rb") as fh:
                same = fh.read() == data
        except FileNotFoundError:
            same = False
        if not same:
            wrong.append(name)
    return sorted(wrong)


def write(directory: str = HOOKS_DIR) -> list[str]:
    """Rewrite the readable copies under DIRECTORY (removing files no agent generates); what changed."""
    from ..base.fsutil import write_atomic

    changed = differences(directory)
    expected = files()
    for name in changed:
        path = os.path.join(directory, name)
        if name in expected:
            write_atomic(path, expected[name], makedirs=True)
        else:
            os.unlink(path)
    return changed


def main(argv: list[str]) -> int:
    """Regenerate hooks/ (or, with --check, report what differs): exit 1 when something was out of date."""
    check = "--check" in argv
    directory = next((a for a in argv if not a.startswith("-")), HOOKS_DIR)
    changed = differences(directory) if check else write(directory)
    for name in changed:
        print(f"{'differs' if check else 'wrote'}: {os.path.join(directory, name)}")
    return 1 if changed and check else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
