"""A scripted agent whose harness blows up while a flag file exists: a real, transient fault.

Registered as the agent spec `flaky` so the CLI can run it. Set `KAUDIT_TEST_FLAKY` to a
path; while that file exists, runs with an even run index raise MemoryError as the
episode starts, the way an exhausted worker fails outside the agent's own error handling.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kaudit.agents import Agent, Episode, ScriptedAgent, register_agent
from kaudit.agents._scripted import ScriptSession


class FlakyAgent(ScriptedAgent):
    """Replays each task's oracle; fails even run indexes while the flag file exists."""

    def __init__(self, flag: Path) -> None:
        super().__init__("oracle")
        self.flag = flag
        self.name = "simulated:flaky"

    def start(self, episode: Episode) -> ScriptSession:
        index = int(episode.run_id.rsplit("/", 1)[-1])  # run ids end with the run index
        if self.flag.exists() and index % 2 == 0:
            raise MemoryError(f"worker out of memory in {episode.run_id}")
        return super().start(episode)


@register_agent("flaky")
def _flaky(argument: str, options: dict[str, Any]) -> Agent:
    return FlakyAgent(Path(os.environ["KAUDIT_TEST_FLAKY"]))
