"""The one place an external agent's tool call enters a run.

An agent that calls tools from outside kaudit (over MCP, or from Inspect AI's own tool
loop) does not fit the harness's pull model, where kaudit asks the agent for its next
turn. `ServedRun` turns it around: each incoming call becomes one agent turn of the
ordinary harness loop (`kaudit.harness.AgentLoop`), so executing it in the run's sandbox,
recording it in `tool_calls`, the step budget, the pre-cleanup dump, the labeler and
the record are all the harness's own code, not a copy. Whatever the harness puts
around a tool call (recording today; limits, boundary and faults later) applies to
external agents too, without a change here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kaudit.agents import AgentDefaults, Episode, Observation, ToolCall, Turn
from kaudit.errors import AgentError, AgentStalledError
from kaudit.harness import RunConditions, RunRequest, RunResult, run_pipeline
from kaudit.harness._conditions import NO_CONDITIONS
from kaudit.spec import Task
from kaudit.substrate import Substrate

RUN_OVER = "the run is over: this call was not executed"
RUN_OVER_EXECUTED = (
    "the run is over (step budget used): this call was executed, its result withheld"
)


@dataclass(frozen=True)
class CallReply:
    """What the external agent gets back for one call: the harness's observation text."""

    ok: bool
    text: str


@dataclass(frozen=True)
class _Finish:
    """The agent declared it is done, with its final message (None: no message)."""

    message: str | None


@dataclass(frozen=True)
class _Failed:
    """The external agent failed: `errored` (its process died) or `stalled` (out of time)."""

    reason: str
    stalled: bool = False


@dataclass(frozen=True)
class _Call:
    call: ToolCall
    reply: asyncio.Future[CallReply]


_Event = _Call | _Finish | _Failed


class ServedRun:
    """A run whose turns arrive from outside: tool calls, then a finish.

    `call` waits until the harness loop has executed the call in the sandbox and
    returns what the agent would have observed. `finish` ends the run with a final
    message; `fail` ends it as errored, `stall` as stalled. Calls after the end get an
    error reply and change nothing. `last_activity` (monotonic seconds) is when the
    agent last did something, for idle timeouts.
    """

    def __init__(self) -> None:
        self._events: asyncio.Queue[_Event] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[CallReply]] = {}
        self._ids = itertools.count(1)
        self._over = False
        self.last_activity = time.monotonic()

    @property
    def over(self) -> bool:
        """True once the run has ended; no call is executed after that."""
        return self._over

    async def call(self, name: str, arguments: dict[str, Any] | str) -> CallReply:
        """Execute one tool call through the harness loop and return its observation."""
        self.touch()
        if self._over:
            return CallReply(False, json.dumps({"error": RUN_OVER}))
        reply: asyncio.Future[CallReply] = asyncio.get_running_loop().create_future()
        call = ToolCall(id=f"call-{next(self._ids)}", name=name, arguments=arguments)
        await self._events.put(_Call(call, reply))
        try:
            return await reply
        finally:
            self.touch()  # a reply is activity too: idleness counts from the last answer

    def touch(self) -> None:
        """Note that the agent did something (a call, a tool listing)."""
        self.last_activity = time.monotonic()

    def finish(self, message: str | None) -> None:
        """End the run: the harness loop sees a final turn with `message`."""
        self._events.put_nowait(_Finish(message))

    def fail(self, reason: str) -> None:
        """End the run as errored (the agent, not the harness, failed)."""
        self._events.put_nowait(_Failed(reason))

    def stall(self, reason: str) -> None:
        """End the run as stalled: the agent used up its time without finishing."""
        self._events.put_nowait(_Failed(reason, stalled=True))

    async def next_event(self) -> _Event:
        """The next thing the external agent did."""
        return await self._events.get()

    def deliver(self, observations: Sequence[Observation]) -> None:
        """Hand the harness's observations back to the calls waiting for them."""
        for observation in observations:
            reply = self._waiting.pop(observation.call.id, None)
            if reply is not None and not reply.done():
                reply.set_result(CallReply(observation.ok, observation.text))

    def wait_for(self, event: _Call) -> None:
        """Remember a call the harness is about to execute."""
        self._waiting[event.call.id] = event.reply

    def close(self) -> None:
        """End the run and answer every call still open.

        A call the harness already took was executed (the loop runs a turn's calls
        before it checks the step budget); a call still queued never was. Each is
        told which, so an agent never believes a write did not happen.
        """
        self._over = True
        for reply in self._waiting.values():
            _answer(reply, RUN_OVER_EXECUTED)
        self._waiting.clear()
        while not self._events.empty():
            event = self._events.get_nowait()
            if isinstance(event, _Call):
                _answer(event.reply, RUN_OVER)


def _answer(reply: asyncio.Future[CallReply], error: str) -> None:
    if not reply.done():
        reply.set_result(CallReply(False, json.dumps({"error": error})))


class ServedSession:
    """The harness's view of a served run: each external call is one turn."""

    def __init__(self, served: ServedRun) -> None:
        self._served = served

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        """Deliver the last call's result, then wait for the agent's next call or finish."""
        self._served.deliver(observations)
        event = await self._served.next_event()
        if isinstance(event, _Failed):
            raise AgentStalledError(event.reason) if event.stalled else AgentError(event.reason)
        if isinstance(event, _Finish):
            return Turn(content=event.message)
        self._served.wait_for(event)
        return Turn(tool_calls=(event.call,))

    async def aclose(self) -> None:
        """The loop is over (finished, errored or out of steps): refuse further calls."""
        self._served.close()


class ServedAgent(AgentDefaults):
    """The `Agent` the harness drives for a served run; its turns come from `served`.

    `name` is the ledger's model key, e.g. `mcp:<client name>`.
    """

    simulated = False

    def __init__(self, served: ServedRun, name: str, facts: dict[str, Any] | None = None) -> None:
        self.name = name
        self._served = served
        self._facts = facts or {}

    def start(self, episode: Episode) -> ServedSession:
        """Begin the served run: from now on each external call is one turn."""
        return ServedSession(self._served)

    def describe(self) -> dict[str, Any]:
        """Configuration for the manifest."""
        return {"kind": "served", "name": self.name} | self._facts


@dataclass(frozen=True)
class Recorded:
    """What a served run's record says that the run itself does not decide.

    `model` is called when the run is over: a client names itself after the run's
    sandbox was seeded, so the record's model may be known only then.
    """

    model: Callable[[], str] | None = None
    task_digest: str | None = None
    world_digest: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def start_served_run(
    served: ServedRun,
    *,
    name: str,
    task: Task,
    substrate: Substrate,
    campaign: str,
    run_index: int,
    seed: int,
    keep_dump: bool = False,
    facts: dict[str, Any] | None = None,
    conditions: RunConditions = NO_CONDITIONS,
    recorded: Recorded | None = None,
) -> asyncio.Task[RunResult]:
    """Start the harness's own run (`run_pipeline`) for `served`, in the background.

    Seeding, the loop, the pre-cleanup dump, labeling and the record are the harness's;
    when the run ends for any reason (even before its first turn, e.g. a failed seed)
    every call still open is answered, so no external agent waits forever. `conditions`
    mean what a campaign's do: faults added to the task's own, seeded from `seed`; an
    identity for a task that declares none. `recorded` is what the record says besides
    (its model, digests, how the run was served); without it the record's model is `name`.
    """
    recorded = recorded or Recorded()
    request = RunRequest(
        campaign=campaign,
        task=task,
        model=name,
        run_index=run_index,
        seed=seed,
        faults=conditions.faults,
        identity=conditions.identity,
        task_digest=recorded.task_digest,
        world_digest=recorded.world_digest,
        extra=recorded.extra,
    )
    agent = ServedAgent(served, name, facts)
    run = asyncio.create_task(
        run_pipeline(request, agent, substrate, keep_dump=keep_dump, recorded_model=recorded.model)
    )
    run.add_done_callback(lambda _: served.close())
    return run
