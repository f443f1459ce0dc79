"""base/layout.py: every name under the git directory is spelled there once, and no two collide."""

from __future__ import annotations

import ast
from pathlib import Path

from git_rewind.base import layout

PACKAGE = Path(layout.__file__).resolve().parent.parent
PLACES = ("rewind_dir", "store_dir", "share_dir")


def test_no_two_names_collide() -> None:
    """The main work tree's own folder is the store's folder: a name used in both would be one file."""
    names = {key: value for key, value in vars(layout).items() if key.isupper() and isinstance(value, str)}
    assert len(set(names.values())) == len(names), names


def test_no_other_module_spells_a_name_under_the_git_directory() -> None:
    """`os.path.join(<x>.rewind_dir | store_dir | share_dir, "literal")` and `scratch_dir(…, "literal")`
    appear nowhere but through layout's names."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "layout.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and len(node.args) >= 2):
                continue
            place, name = node.args[0], node.args[1]
            if isinstance(place, ast.Attribute) and place.attr in PLACES and isinstance(name, (ast.Constant,
                                                                                               ast.JoinedStr)):
                literal = isinstance(name, ast.Constant) or any(isinstance(v, ast.Constant) and v.value
                                                                for v in name.values[:1])
                if literal:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []


def test_purge_knows_what_to_do_with_every_name() -> None:
    """`purge --text` must reach every file git-rewind keeps: a name added without saying how purge treats
    it (layout.PURGE) fails here."""
    names = {value for key, value in vars(layout).items() if key.isupper() and isinstance(value, str)}
    assert set(layout.PURGE) == names
    assert set(layout.PURGE.values()) <= {"json", "lines", "index", "drop", "copy", "scratch", "nothing"}
