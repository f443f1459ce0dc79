"""End to end with the real OpenCode CLI (opencode-ai 1.18.33): our plugin, installed by `git rewind install`,
checkpoints a session, and `git rewind undo --full` forks the conversation through OpenCode's own server
(`opencode serve --pure`, started for the rewind). The session and its checks are shared with Kilo, OpenCode's
fork: tests/helpers/opencodefamily.py.

OpenCode is kept offline with OPENCODE_DISABLE_MODELS_FETCH, _AUTOUPDATE and _LSP_DOWNLOAD
(shared/agents/other-agents.md §4.5); at start it installs `@opencode-ai/plugin` with npm, through the npm
cache kept beside it, hence the longer first timeout.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import agentcli
from helpers.agentcli import e2e
from helpers.opencodefamily import OPENCODE, play
from helpers.workdir import Workdir

pytestmark = e2e


@pytest.fixture(scope="module")
def opencode() -> Path:
    return agentcli.opencode()


def test_plugin_checkpoints_a_session_and_undo_full_forks_it_through_opencodes_server(
        opencode: Path, agent_project: Workdir) -> None:
    assert len(play(OPENCODE, opencode, agent_project)) == 6
