"""The Ray executor gives the local executor's verdicts for the same seeds."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import ray  # a dev dependency: its absence is a failure, never a skip

from kaudit.agents import Agent, Episode, Observation, ReferenceAgent, ScriptedAgent, Turn
from kaudit.agents._scripted import ScriptSession
from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.harness import CampaignPlan, Executor, run_campaign
from kaudit.harness._executor import LocalExecutor
from kaudit.harness._ray import RayExecutor
from kaudit.ledger import Ledger, walk_chain
from kaudit.suites import Suite
from tests.agents.chat.conftest import agent_for
from tests.agents.chat.personas import mixture

ROOT = Path(__file__).parent.parent.parent

pytestmark = [
    pytest.mark.ray,
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    # workers unpickle the mini world's tools, which live in the test package, and import
    # kaudit from this checkout (not whichever one the interpreter has installed)
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def mixture_server() -> Iterator[ChatTestServer]:
    with ChatTestServer({"mixture": mixture()}) as server:
        yield server


def verdicts(
    suite: Suite, agents: list[Agent], executor: Executor, path: Path
) -> list[tuple[Any, ...]]:
    with Ledger(path) as ledger:
        result = asyncio.run(
            run_campaign(CampaignPlan("c", k=6, seed=21), suite, agents, ledger, executor=executor)
        )
        assert walk_chain(ledger).records == result.ran == 12
        manifest = ledger.manifest("c")
        assert manifest is not None
        kind = manifest["executor"]["kind"]
        return [
            (r.model, r.task, r.run_index, r.seed, r.outcome, r.sub_label, r.final_digest, kind)
            for r in sorted(ledger.records(), key=lambda r: (r.model, r.run_index))
        ]


def test_ray_campaign_gets_the_local_verdicts_for_the_same_seeds(
    cluster: None, mixture_server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    def agents() -> list[Agent]:
        return [ReferenceAgent(), agent_for(mixture_server, "openai", "mixture")]

    local = verdicts(mini_suite, agents(), LocalExecutor(4), tmp_path / "local.sqlite")
    remote = verdicts(
        mini_suite, agents(), RayExecutor(workers=2, concurrency=4), tmp_path / "ray.sqlite"
    )
    assert [row[:-1] for row in remote] == [row[:-1] for row in local]
    assert {row[-1] for row in local} == {"local"} and {row[-1] for row in remote} == {"ray"}
    assert {row[4] for row in remote} >= {"PASS", "FAIL_DAMAGE"}


class PidAgent(ScriptedAgent):
    """Replays a script and signs its closing answer with the process it ran in."""

    def start(self, episode: Episode) -> ScriptSession:
        session = super().start(episode)
        replay = session.next_turn

        async def next_turn(observations: Sequence[Observation]) -> Turn:
            turn = await replay(observations)
            if turn.tool_calls or turn.stalled:
                return turn
            return dataclasses.replace(turn, content=f"{turn.content}\npid {os.getpid()}")

        session.next_turn = next_turn  # type: ignore[method-assign]
        return session


def test_ray_runs_execute_in_worker_processes(
    cluster: None, mini_suite: Suite, tmp_path: Path
) -> None:
    """Fails if the executor's actor call were replaced by a local call: the verdicts
    would still equal the local ones, but every run would be signed by this process."""
    with Ledger(tmp_path / "pid.sqlite") as ledger:
        asyncio.run(
            run_campaign(
                CampaignPlan("p", k=4, seed=1), mini_suite, [PidAgent("refuse_all")], ledger,
                executor=RayExecutor(workers=2, concurrency=4),
            )
        )  # fmt: skip
        pids = {r.final_message.rsplit("pid ", 1)[1] for r in ledger.records() if r.final_message}
    assert len(pids) >= 1 and str(os.getpid()) not in pids


def test_every_ray_run_is_executed_once_and_reaches_the_ledger_once(
    cluster: None, mini_suite: Suite, tmp_path: Path
) -> None:
    """Many runs over three actors into the one writer: each planned run is claimed once,
    executed once (the model server saw exactly each run's own replies) and recorded once.

    Fails if a job is dropped (tried: `remote` returning None for every 7th job) or sent
    to the workers twice (tried: awaiting a second `run.remote` of the same job: the
    server then sees twice the requests), and if the executor stops reporting its stats.
    """
    with ChatTestServer({"mixture": mixture()}) as server:
        agents: list[Agent] = [ReferenceAgent(), agent_for(server, "openai", "mixture")]
        executor = RayExecutor(workers=3, concurrency=9)
        seen: list[tuple[str, str, str, int]] = []
        with Ledger(tmp_path / "once.sqlite") as ledger:
            asyncio.run(
                run_campaign(
                    CampaignPlan("once", k=15, seed=3), mini_suite, agents, ledger,
                    executor=executor, on_result=lambda r: seen.append(key_of(r)),
                )
            )  # fmt: skip
            records = list(ledger.records(all_attempts=True))
            claims = ledger._conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
        requests = server.stats.requests
    planned = {("once", a.name, "demo/close-account", i) for a in agents for i in range(15)}
    assert sorted(seen) == sorted(planned) == sorted(key_of(r) for r in records)
    assert claims == len(planned)
    assert requests == sum(r.steps for r in records if r.model.startswith("openai"))
    stats = executor.stats
    assert stats is not None and stats.startup_s > 0 and stats.worker_cpu_s > 0
    assert stats.worker_peak_rss_mb > 10


def key_of(record: Any) -> tuple[str, str, str, int]:
    return (record.campaign, record.model, record.task, record.run_index)


CLOSE_BOTH = """
import os, sqlite3
conn = sqlite3.connect(os.environ["KAUDIT_DB_PATH"])
conn.execute("UPDATE account SET status = 'closed' WHERE id IN ('ACC_002', 'ACC_004')")
conn.commit()
guard = os.getppid()  # the guard kaudit starts; its parent is the process running the run
with open(f"/proc/{guard}/stat") as stat:
    print("pid", stat.read().rsplit(")", 1)[1].split()[1])
"""


def test_a_command_agents_world_lives_on_the_worker_that_runs_it(
    cluster: None, mini_suite: Suite, tmp_path: Path
) -> None:
    """Fails if the world file were made on the caller while the agent ran on a worker (the
    agent would find no file), or the worker's state were never taken back (no damage)."""
    from kaudit.serve import CommandAgent

    script = tmp_path / "close_both.py"
    script.write_text(CLOSE_BOTH)
    agent = CommandAgent(f"{sys.executable} {script}", "close-both")
    with Ledger(tmp_path / "command.sqlite") as ledger:
        asyncio.run(
            run_campaign(
                CampaignPlan("w", k=2, seed=3), mini_suite, [agent], ledger,
                executor=RayExecutor(workers=2, concurrency=2),
            )
        )  # fmt: skip
        found = list(ledger.records())
    assert [(r.outcome, r.sub_label) for r in found] == [("FAIL_DAMAGE", "completed_damage")] * 2
    runners = {r.final_message.rsplit("pid ", 1)[1] for r in found if r.final_message}
    assert runners and str(os.getpid()) not in runners
