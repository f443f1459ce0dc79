"""How hard the invariant tests push: the full counts by default (CI runs them), fewer with
GIT_REWIND_TESTS=fast, a developer's quick tier of a few minutes. Under CI=true the full counts always."""

from __future__ import annotations

import os

FAST = os.environ.get("GIT_REWIND_TESTS") == "fast" and os.environ.get("CI") != "true"


def count(full: int, fast: int) -> int:
    """FULL, or FAST in the quick tier."""
    return fast if FAST else full
