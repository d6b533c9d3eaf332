"""Agents that replay scripts: the test doubles shipped with the library.

`ScriptedAgent` replays one script. `ReferenceAgent` draws, per run and from the
run's recorded seed, one of a task's oracle/counterexample scripts with the task's
declared weights: a simulated model whose true damage probability is known, so the
statistics can be checked against the truth.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from kaudit.agents._protocol import AgentDefaults, Episode, Observation, ToolCall, Turn
from kaudit.errors import AgentError, KauditError
from kaudit.spec import Task
from kaudit.spec._script import Script, ScriptStep


class ScriptSession:
    """Replays the steps of one script, one turn per step."""

    def __init__(self, steps: Sequence[ScriptStep], run_id: str) -> None:
        self._steps = list(steps)
        self._run_id = run_id
        self._index = 0

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        """The next scripted step; past the end, the script is over with no message."""
        if self._index >= len(self._steps):
            return Turn(content=None)
        step = self._steps[self._index]
        if step.stall:
            return Turn(content=step.content, stalled=True)  # never advances: spins to the budget
        self._index += 1
        if step.error is not None:
            raise AgentError(step.error)
        calls = tuple(
            ToolCall(
                id=f"{self._run_id}:{self._index}:{i}", name=c.name, arguments=dict(c.arguments)
            )
            for i, c in enumerate(step.tool_calls)
        )
        return Turn(content=step.content, tool_calls=calls)

    async def aclose(self) -> None:
        """Nothing to release."""


class ScriptedAgent(AgentDefaults):
    """Replays the script called `script_name` of each task (default: the oracle)."""

    simulated = True

    def __init__(self, script_name: str = "oracle", *, script: Script | None = None) -> None:
        self.script_name = script.name if script else script_name
        self._script = script
        self.name = f"simulated:scripted:{self.script_name}"

    def start(self, episode: Episode) -> ScriptSession:
        """Replay the chosen script of the episode's task."""
        script = self._script or _script_of(episode.task, self.script_name)
        return ScriptSession(script.steps, episode.run_id)

    def describe(self) -> dict[str, Any]:
        """Configuration for the manifest."""
        return {"kind": "scripted", "script": self.script_name, "simulated": True}

    def require_scripts(self, tasks: Iterable[Task]) -> None:
        """Raise KauditError naming the first task without this agent's script.

        Every run of such a task would be INVALID; refusing before the first run writes
        nothing into the ledger.
        """
        if self._script is not None:
            return
        for task in tasks:
            names = [script.name for script in task.scripts()]
            if self.script_name not in names:
                raise KauditError(
                    f"scripted:{self.script_name}: task {task.id} has no script named "
                    f"{self.script_name!r}; it has {', '.join(names)}"
                )


class ReferenceAgent(AgentDefaults):
    """A seeded stochastic mixture over each task's scripts, weighted as the suite declares."""

    simulated = True

    def __init__(self, name: str = "simulated:reference") -> None:
        self.name = name

    @staticmethod
    def choose(task: Task, seed: int) -> str:
        """The script a run with `seed` replays; a pure function of (task, seed)."""
        weights = task.weights()
        names = sorted(weights)
        return random.Random(seed).choices(names, [weights[n] for n in names])[0]

    def start(self, episode: Episode) -> ScriptSession:
        """Draw a script from the run's seed and replay it."""
        name = self.choose(episode.task, episode.seed)
        return ScriptSession(episode.task.script(name).steps, episode.run_id)

    def describe(self) -> dict[str, Any]:
        """Configuration for the manifest."""
        return {"kind": "reference", "simulated": True}


def _script_of(task: Task, name: str) -> Script:
    try:
        return task.script(name)
    except KeyError:
        raise AgentError(f"task {task.id} has no script named {name!r}") from None
