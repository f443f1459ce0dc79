"""event: how big an edit is, and which files an apply_patch text names (what the policy reads)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_rewind.agents import event as ev

_TEXT = st.text(alphabet="ab\n ", max_size=30)


def _common_ends(old: str, new: str) -> int:
    """The longest common prefix plus suffix, the two never overlapping on the shorter side."""
    prefix = len(os.path.commonprefix([old, new]))
    suffix = len(os.path.commonprefix([old[::-1], new[::-1]]))
    return min(prefix + suffix, len(old), len(new))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_TEXT, _TEXT)
def test_changed_chars_is_the_longer_side_without_the_common_ends(old: str, new: str) -> None:
    changed = ev.changed_chars(old, new)
    assert changed == max(len(old), len(new)) - _common_ends(old, new)
    assert changed == ev.changed_chars(new, old)  # the same edit undone is as big
    assert (changed == 0) == (old == new)
    assert abs(len(old) - len(new)) <= changed <= max(len(old), len(new))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_TEXT, _TEXT, _TEXT, _TEXT)
def test_context_quoted_around_an_edit_does_not_make_it_bigger(before: str, old: str, new: str, after: str) -> None:
    assert ev.changed_chars(before + old + after, before + new + after) <= max(len(old), len(new))


PATCH = """\
*** Begin Patch
*** Add File: docs/new guide.md
+# Guide
+*** Add File: not/a/header.txt
*** Update File: src/app.py
*** Move to: src/main.py
@@ def main():
-    print('hello')
+    print('hello, world')
*** Delete File: old.txt   \r
*** Update File: /abs/path/tool.py
@@
-x
+y
*** End Patch
"""


def test_patch_files_are_the_header_lines_in_order() -> None:
    assert ev.patch_files(PATCH) == [
        ("Add", "docs/new guide.md"),  # spaces inside a path are kept
        ("Update", "src/app.py"),
        ("Move", "src/main.py"),
        ("Delete", "old.txt"),  # trailing blanks and a CR are not part of it
        ("Update", "/abs/path/tool.py"),
    ]


@pytest.mark.parametrize("patch", [
    "",
    "*** Begin Patch\n*** End Patch\n",
    "+*** Add File: added/by/a/content/line\n",  # a header quoted inside the content
    " *** Update File: indented\n",
    "*** Update File:\n",  # no path
    "--- a/x\n+++ b/x\n@@\n-a\n+b\n",  # a unified diff is not an apply_patch text
])
def test_texts_without_header_lines_name_no_file(patch: str) -> None:
    assert ev.patch_files(patch) == []


def test_read_patch_sizes_the_edit_and_counts_a_deleted_files_whole_size(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("0123456789")
    event = ev.Event("codex", "PreToolUse", ev.PRE_TOOL, "s", str(tmp_path))
    ev.read_patch(event, PATCH)
    assert event.paths == ["docs/new guide.md", "src/app.py", "src/main.py", "old.txt", "/abs/path/tool.py"]
    # Every +/- line without its sign (a header quoted as content too), and the deleted old.txt whole.
    assert event.change_chars == len("# Guide") + len("*** Add File: not/a/header.txt") \
        + len("    print('hello')") + len("    print('hello, world')") + 2 + 10
    assert event.tool_kind == ev.WRITE  # it adds a file


def test_a_shell_commands_line_is_read_from_its_string_or_argv_and_nothing_else() -> None:
    from git_rewind.agents.event import shell_command

    assert shell_command("sed -i 's/a/b/' f.txt") == "sed -i 's/a/b/' f.txt"
    assert shell_command(["bash", "-lc", "make test"]) == "bash -lc make test"  # Codex's argv form
    assert [shell_command(v) for v in (None, "", "  ", 42, {"command": "ls"})] == [None] * 5
