"""End to end with the real Kilo Code CLI (@kilocode/cli 7.7.7): our plugin, installed by `git rewind install
--agent kilo`, checkpoints a session, and `git rewind undo --full` forks the conversation through Kilo's own
server (`kilo serve --pure`, started for the rewind). The session and its checks are OpenCode's
(tests/helpers/opencodefamily.py): Kilo is its fork, and git-rewind serves both with one implementation.

Kilo is kept offline with KILO_DISABLE_MODELS_FETCH, _AUTOUPDATE, _SESSION_INGEST, _LSP_DOWNLOAD and
KILO_TELEMETRY_LEVEL=off (shared/agents/kilo-aider.md A); at start it still asks registry.npmjs.org for
@kilocode/plugin, through the npm cache kept beside it. `kilo run` wraps every argument holding a space in
literal double quotes, so each prompt goes word by word, and the note records it exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import agentcli
from helpers.agentcli import e2e
from helpers.opencodefamily import KILO, PROMPT_1, PROMPT_2, play
from helpers.workdir import Workdir

pytestmark = e2e


@pytest.fixture(scope="module")
def kilo() -> Path:
    return agentcli.kilo()


def test_plugin_checkpoints_a_kilo_session_and_undo_full_forks_it_through_kilos_server(
        kilo: Path, agent_project: Workdir) -> None:
    found = play(KILO, kilo, agent_project)
    _start, prompt_1, _edit, _idle_1, prompt_2, _idle_2 = found
    assert (prompt_1.note["prompt"], prompt_2.note["prompt"]) == (PROMPT_1, PROMPT_2)  # no quotes added
