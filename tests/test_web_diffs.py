"""faces/web/diffs.py: the page's diffs, checked against what Pygments itself picks."""

from __future__ import annotations

import re

import pytest
from pygments.lexers import LEXERS, get_lexer_for_filename
from pygments.util import ClassNotFound

from git_rewind.faces.web.diffs import Colour, lexer_class


def _names() -> list[str]:
    """A file name for each filename pattern Pygments ships (`*` → `file`, `?` → `x`, a class → its first
    character), and names no pattern or several patterns fit."""
    names = {"Makefile", "CMakeLists.txt", "Dockerfile", ".bashrc", "x.h", "x.inc", "notes.unknown-ext", "README",
             "x.PY", "warm.py", "a b.txt", "ä.rs"}
    for _module, _lexer, _aliases, patterns, _types in LEXERS.values():
        for pattern in patterns:
            name = re.sub(r"\[!?(.)[^\]]*\]", r"\1", pattern).replace("*", "file").replace("?", "x")
            names.add(name)
    return sorted(names)


@pytest.mark.parametrize("chunk", range(8))
def test_the_lexer_for_a_file_name_is_the_one_pygments_picks(chunk: int) -> None:
    """lexer_class skips get_lexer_for_filename's first-call cost (every pattern compiled, every package's entry
    points read); for every file name a shipped pattern fits, and some none or several fit, it picks the same
    class Pygments does (none installed here adds plugin lexers, so both see the same table)."""
    names = _names()
    assert len(names) > 500
    for name in names[chunk::8]:
        try:
            expected: type | None = type(get_lexer_for_filename(name))
        except ClassNotFound:
            expected = None
        assert lexer_class(name) is expected, name


def test_colour_falls_back_to_plain_text_and_keeps_every_line() -> None:
    colour = Colour()
    assert type(colour.lexer("dir/notes.unknown-ext")).__name__ == "TextLexer"
    assert type(colour.lexer("src/app.py")).__name__ == "PythonLexer"
    lines = ["def f():", "", "    return '<b>'  "]
    html = colour.lines("src/app.py", lines)
    assert len(html) == 3 and "&lt;b&gt;" in html[2] and re.sub(r"<[^>]+>", "", html[0]) == "def f():"
