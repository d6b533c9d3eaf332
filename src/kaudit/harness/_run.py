"""One run as explicit phases: seed -> drive -> dump -> label -> record.

Each phase is a small function with typed inputs and outputs, so one can be swapped
(an external agent drives instead of kaudit's loop; another substrate seeds and
dumps) while the others, and the record they produce, stay the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from kaudit._run_key import RunKey
from kaudit._usage import Usage
from kaudit.agents import Agent, Episode, Observation, RunFacts, Turn
from kaudit.errors import AgentError, AgentStalledError, InvalidRunError, KauditError
from kaudit.gateway._events import BoundaryAttempt, InjectedFault
from kaudit.harness._gateway import RunGateway, build_gateway
from kaudit.harness._offload import off_loop
from kaudit.harness._world import handed_world
from kaudit.label import RunMeta, Verdict, final_state_digest, label_run
from kaudit.label._types import Termination
from kaudit.label.classify import last_message
from kaudit.ledger import RunRecord, usage_extra, usage_fields
from kaudit.ledger._record import RunTiming
from kaudit.spec import FaultRule, Identity, Task
from kaudit.substrate import Dump, FrozenState, Sandbox, StateDump, Substrate
from kaudit.suites import Referee
from kaudit.tools import Tool, ToolResult

Event = TypeVar("Event", InjectedFault, BoundaryAttempt)


@dataclass(frozen=True)
class RunResult:
    """A finished run: its record and, when kept, its final state image."""

    record: RunRecord
    final_image: bytes | None
    verdict: Verdict | None


@dataclass(frozen=True)
class RunRequest:
    """Everything that identifies and shapes one run, and every fact its record takes from it.

    The record is built from the request once, in `record` (or `invalid_result`), so what
    a campaign or a serve knows about the run (its attempt, digests, stopping rule, how it
    was served) goes in here, never into a record patched after it was built.
    """

    campaign: str
    task: Task
    model: str
    run_index: int
    seed: int
    restarted: int = 0
    faults: tuple[FaultRule, ...] = ()
    identity: Identity | None = None
    attempt: int = 0
    """0 for a run's first record; a harness retry of the run is attempt + 1."""
    task_digest: str | None = None
    """What the run measures (`run_digest`): runs of different digests never pool."""
    world_digest: str | None = None
    """The digest of the world template the run is seeded from."""
    stopping_rule: dict[str, Any] | None = None
    """The campaign's stopping rule that admitted the run (`CampaignPlan.stopping_rule`)."""
    suite_tasks_digest: str | None = None
    """The digest of the task ids of the suite the campaign drew from."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Facts the caller adds to the record's `extra` (how a served run was served)."""

    @property
    def run_id(self) -> str:
        """The id the run is known by to its sandbox, its agent and a serving stack's logs."""
        return self.key.run_id

    @property
    def key(self) -> RunKey:
        """The ledger key of the run."""
        return RunKey(self.campaign, self.model, self.task.id, self.run_index)

    def recorded(self) -> dict[str, Any]:
        """The record fields the request decides, for every record built from it."""
        return self.key._asdict() | {
            "seed": self.seed,
            "restarted": self.restarted,
            "attempt": self.attempt,
            "task_digest": self.task_digest,
            "world_digest": self.world_digest,
            "stopping_rule": self.stopping_rule,
            "suite_tasks_digest": self.suite_tasks_digest,
        }

    def effective_faults(self) -> tuple[FaultRule, ...]:
        """The task's own faults, then the campaign's."""
        return (*self.task.faults, *self.faults)

    def effective_identity(self) -> Identity | None:
        """The task's identity when it declares one, else the campaign's."""
        return self.task.identity or self.identity


@dataclass
class Transcript:
    """What driving the agent produced: how it ended, its turns, and what they cost."""

    termination: Termination = "completed"
    final_message: str | None = None
    agent_error: str | None = None
    api_error: str | None = None
    """The serving-stack failure that ended the run (`http_500`, `timeout`, …), if any."""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    """The turns' usage summed, with a failed last call's (`AgentError.usage`)."""
    turns: list[dict[str, Any]] = field(default_factory=list)


class Driver(Protocol):
    """Whatever produces the run's tool calls through the gateway and says how it ended."""

    async def drive(self, episode: Episode, gateway: RunGateway) -> Transcript:
        """Drive one run to its end."""
        ...


def offered_tools(task: Task, substrate: Substrate) -> dict[str, Tool]:
    """Exactly the tools the task selects; a missing one is a suite error, not a run."""
    missing = [name for name in task.tools if name not in substrate.tools]
    if missing:
        raise KauditError(f"task {task.id}: substrate {substrate.name} has no tool {missing}")
    return {name: substrate.tools[name] for name in task.tools}


class AgentLoop:
    """kaudit's own driver: asks the agent for turns and runs their calls, under the step budget."""

    def __init__(self, agent: Agent, substrate: Substrate | None = None) -> None:
        self.agent = agent
        self.substrate = substrate
        """Whose database the calls wait on: on PostgreSQL they run in a worker thread."""

    async def drive(self, episode: Episode, gateway: RunGateway) -> Transcript:
        """The agent loop; the session is closed however the run ends."""
        transcript = Transcript()
        session = self.agent.start(episode)
        observations: list[Observation] = []
        try:
            for _ in range(episode.task.max_steps):
                try:
                    turn = await session.next_turn(observations)
                except AgentError as exc:
                    stalled = isinstance(exc, AgentStalledError)  # out of time, not broken
                    transcript.termination = "stalled" if stalled else "errored"
                    transcript.agent_error = str(exc)
                    transcript.api_error = exc.kind
                    if isinstance(exc.usage, Usage):  # a plugin's error may carry another
                        transcript.usage += exc.usage
                    return transcript
                _add_turn(transcript, turn)
                if turn.stalled:
                    continue
                if not turn.tool_calls:
                    transcript.final_message = turn.content
                    return transcript
                observations = []
                for call in turn.tool_calls:
                    result = await self._call(gateway, call.id, call.name, call.arguments)
                    observations.append(Observation(call=call, ok=result.ok, text=result.to_text()))
            transcript.termination = "stalled"
            return transcript
        finally:
            await session.aclose()

    async def _call(
        self, gateway: RunGateway, call_id: str, name: str, arguments: dict[str, Any] | str
    ) -> ToolResult:
        """One call through the gateway; off the event loop when it waits on a server."""
        if self.substrate is None:
            return gateway.gateway.call(call_id, name, arguments)
        return await off_loop(
            self.substrate, lambda: gateway.gateway.call(call_id, name, arguments)
        )


def _add_turn(transcript: Transcript, turn: Turn) -> None:
    transcript.steps += 1
    transcript.usage += turn.usage
    transcript.turns.append(
        {
            "content": turn.content,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls
            ],
            "stalled": turn.stalled,
        }
    )


def seed(request: RunRequest, substrate: Substrate) -> Sandbox:
    """A fresh sandbox for the run (raises `KauditError` when the world cannot be seeded)."""
    return substrate.seed(request.run_id)


def dump(sandbox: Sandbox) -> Dump | None:
    """The final state, taken before the sandbox is released; None when it cannot be read.

    The dump cannot change once taken; the caller releases it when done with it.
    """
    try:
        return sandbox.dump()
    except KauditError:
        return None


@dataclass(frozen=True)
class Labeled:
    """The label phase's answer: a verdict, or why the run has none, and the final digest."""

    verdict: Verdict | None
    invalid_reason: str | None = None
    final_digest: str | None = None
    """The state digest of the final state (`kaudit.label.state`); None without a dump."""


def label(
    initial: StateDump,
    final: Dump | None,
    task: Task,
    transcript: Transcript,
    volatile: dict[str, tuple[str, ...]],
    *,
    fast: bool = True,
    world_lost: str | None = None,
) -> Labeled:
    """Judge the run by its state (pure); no final dump means INVALID, never a score.

    `world_lost` is why the agent left no readable world (`final` is then an empty one).
    """
    meta = RunMeta(transcript.termination, transcript.final_message, task.refusal_token,
                   last_message(transcript.turns), task.convention, world_lost)  # fmt: skip
    try:
        verdict = label_run(
            initial.image,
            final if final is None or isinstance(final, FrozenState) else final.image,
            task.damage,
            task.checks,
            task.params,
            meta,
            volatile=volatile,
            fast=fast,
            digest=True,
        )
    except InvalidRunError as exc:
        return Labeled(None, str(exc), None if final is None else _final_digest(initial, final))
    return Labeled(verdict, None, verdict.final_digest)


def _final_digest(initial: StateDump, final: Dump) -> str:
    """The state digest of a run the labeler refused (its checks were denied)."""
    if isinstance(final, FrozenState):
        with final.reading() as conn:
            return final_state_digest(initial.image, conn)
    return final_state_digest(initial.image, final.image)


@dataclass(frozen=True)
class RecordParts:
    """What the record phase combines besides the verdict."""

    transcript: Transcript
    gateway: RunGateway
    initial_digest: str
    final_digest: str | None
    timing: RunTiming
    simulated: bool
    agent_facts: RunFacts | None = None
    sampling: dict[str, Any] | None = None
    judged: tuple[str, dict[str, Any]] | None = None
    """The referee's name and its judgment of the run (an imported suite's own checks)."""


def record(request: RunRequest, labeled: Labeled, facts: RecordParts) -> RunRecord:
    """The one place a labeled (or invalid) run becomes a `RunRecord`."""
    verdict = labeled.verdict
    transcript = facts.transcript
    usage = _usage(transcript, facts.agent_facts)
    extra: dict[str, Any] = {"simulated": facts.simulated}
    if facts.sampling is not None:
        extra["sampling"] = facts.sampling
    extra.update(usage_extra(usage))
    if transcript.api_error is not None:
        extra["api_error"] = transcript.api_error
    if facts.judged is not None:
        extra[facts.judged[0]] = facts.judged[1]
    outside = facts.agent_facts or RunFacts()  # what the agent's doors saw
    extra.update(outside.extra)
    extra.update(request.extra)
    identity = request.effective_identity()
    return RunRecord(
        **request.recorded(),
        status="labeled" if verdict else "invalid",
        invalid_reason=labeled.invalid_reason,
        outcome=verdict.outcome if verdict else None,
        sub_label=verdict.sub_label if verdict else None,
        counts_as_damage=bool(verdict and verdict.counts_as_damage),
        counts_as_damage_upper=bool(verdict and verdict.counts_as_damage_upper),
        success=bool(verdict and verdict.success),
        severity=verdict.severity if verdict else None,
        dollars=str(verdict.dollars) if verdict and verdict.dollars is not None else None,
        verdict=verdict.to_json() if verdict else None,
        termination=transcript.termination,
        agent_error=transcript.agent_error,
        final_message=transcript.final_message,
        transcript=list(outside.transcript) or transcript.turns,
        tool_calls=[*facts.gateway.recording.calls, *outside.tool_calls],
        steps=transcript.steps,
        **usage_fields(usage),
        timing=facts.timing,
        initial_digest=facts.initial_digest,
        final_digest=facts.final_digest,
        extra=extra,
        faults=[*facts.gateway.injected_faults(), *_events(InjectedFault, outside.faults)],
        boundary_attempts=[
            *facts.gateway.boundary_attempts(),
            *_events(BoundaryAttempt, outside.boundary_attempts),
        ],
        identity=identity.role if identity else None,
    )


def _events(model: type[Event], found: tuple[dict[str, Any], ...]) -> list[Event]:
    """A door's events as the record's models; a malformed one is a harness error."""
    try:
        return [model.model_validate(event) for event in found]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise KauditError(
            f"a door reported a malformed {model.__name__}: {where}: {first['msg']}"
        ) from None


def _usage(transcript: Transcript, facts: RunFacts | None) -> Usage:
    """The agent's own totals when it counted calls (they include a failed last call)."""
    if facts is not None and facts.usage.api_calls:
        return facts.usage
    return transcript.usage


async def run_pipeline(
    request: RunRequest,
    agent: Agent,
    substrate: Substrate,
    *,
    driver: Driver | None = None,
    keep_dump: bool = False,
    fast_diff: bool = True,
    referee: Referee | None = None,
    recorded_model: Callable[[], str] | None = None,
) -> RunResult:
    """Seed, drive, dump, label and record one run.

    `driver` replaces kaudit's agent loop (an external agent serving the same gateway);
    `agent` still names the model and supplies its facts. A harness failure (seeding,
    dump) makes the run INVALID with the reason; it is recorded, never scored.
    `referee` also judges the final state the imported suite's way (`RecordParts.judged`).
    `recorded_model` names the record's model when it is known only once the run is over
    (a served client names itself after its sandbox was seeded under `request.run_id`).
    """
    started = time.perf_counter()
    tools = offered_tools(request.task, substrate)
    t0 = time.perf_counter()
    try:
        sandbox = await off_loop(substrate, lambda: seed(request, substrate))
    except KauditError as exc:
        named = _named(request, recorded_model)
        return invalid_result(named, f"seed failed: {exc}", total_ms=_ms(started))
    seed_ms = _ms(t0)
    try:
        gateway = await off_loop(  # a boundary installs its grants on the server
            substrate,
            lambda: build_gateway(
                tools,
                sandbox,
                seed=request.seed,
                faults=request.effective_faults(),
                identity=request.effective_identity(),
                ownership=substrate.ownership,
            ),
        )
        t0 = time.perf_counter()
        with handed_world(agent, request, sandbox) as handover:  # taken back before the dump
            episode = Episode(
                task=request.task,
                run_id=request.run_id,
                seed=request.seed,
                tool_specs=gateway.gateway.specs(),
                world=handover.access,
            )
            transcript = await (driver or AgentLoop(agent, substrate)).drive(episode, gateway)
        agent_ms = _ms(t0)
        t0 = time.perf_counter()
        final = await off_loop(substrate, lambda: dump(sandbox))
        dump_ms = _ms(t0)
    finally:
        await off_loop(substrate, sandbox.close)
    try:
        t0 = time.perf_counter()
        volatile = dict(substrate.volatile)
        # Foreign code could have written the change log itself: only the full diff is sure.
        fast = fast_diff and handover.access is None
        labeled = label(
            sandbox.initial, final, request.task, transcript, volatile,
            fast=fast, world_lost=handover.lost,
        )  # fmt: skip
        judged = _judged(referee, request.task, final, transcript, gateway)
        label_ms = _ms(t0)
        image = final.image if (final is not None and keep_dump) else None
    finally:
        if final is not None:
            final.release()  # a pooled SQLite connection goes back to its pool here
    timing = RunTiming(
        seed_ms=seed_ms,
        agent_ms=agent_ms,
        dump_ms=dump_ms,
        label_ms=label_ms,
        total_ms=_ms(started),
    )
    facts = RecordParts(
        transcript=transcript,
        gateway=gateway,
        initial_digest=sandbox.initial.digest,
        final_digest=labeled.final_digest,
        timing=timing,
        simulated=agent.simulated,
        agent_facts=agent.run_facts(request.run_id),
        sampling=agent.sampling(),
        judged=judged,
    )
    built = record(_named(request, recorded_model), labeled, facts)
    return RunResult(built, image, labeled.verdict)


def _named(request: RunRequest, recorded_model: Callable[[], str] | None) -> RunRequest:
    """The request under the model name its record takes."""
    return request if recorded_model is None else replace(request, model=recorded_model())


def _judged(
    referee: Referee | None,
    task: Task,
    final: Dump | None,
    transcript: Transcript,
    gateway: RunGateway,
) -> tuple[str, dict[str, Any]] | None:
    """The referee's judgment of the final state; none without a referee or a dump."""
    if referee is None or final is None:
        return None
    found = referee.judge(task, final, transcript.final_message, gateway.recording.calls)
    return None if found is None else (referee.name, found)


def invalid_result(
    request: RunRequest,
    reason: str,
    *,
    total_ms: float = 0.0,
    extra: dict[str, Any] | None = None,
    spent: RunFacts | None = None,
) -> RunResult:
    """A run the harness could not complete: recorded INVALID with its reason, never scored.

    `spent` is what the agent spent before the harness failed: never scored, but the
    tokens and dollars were spent, so the record keeps them when the agent counted calls.
    """
    usage = _usage(Transcript(), spent)
    built = RunRecord(
        **request.recorded(),
        status="invalid",
        invalid_reason=reason,
        termination="errored",
        **usage_fields(usage),
        timing=RunTiming(total_ms=total_ms),
        extra=(extra or {}) | dict(request.extra),
    )
    return RunResult(built, None, None)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
