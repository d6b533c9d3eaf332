"""Seeding, dump and cleanup leave the event loop where they wait on a server, not on SQLite."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from kaudit.agents import ReferenceAgent
from kaudit.harness import RunRequest, run_pipeline
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.substrate import Blueprint, SqliteSubstrate
from kaudit.suites import Suite
from kaudit.worlds._world import get_world
from tests.pg import server_url

PHASES = ("seed", "dump", "close")


class Noting:
    """Notes the thread each phase of a run ran on (mixed into a real substrate)."""

    threads: dict[str, int]

    def seed(self, run_id: str) -> Any:
        self.threads["seed"] = threading.get_ident()
        sandbox = super().seed(run_id)  # type: ignore[misc]
        for phase in ("dump", "close"):
            setattr(sandbox, phase, self._noted(phase, getattr(sandbox, phase)))
        return sandbox

    def _noted(self, phase: str, work: Callable[[], Any]) -> Callable[[], Any]:
        def noted() -> Any:
            self.threads[phase] = threading.get_ident()
            return work()

        return noted


class NotingPostgres(Noting, PostgresSubstrate):
    pass


class NotingSqlite(Noting, SqliteSubstrate):
    pass


def phase_threads(substrate: Noting, suite: Suite) -> tuple[dict[str, int], int, str]:
    substrate.threads = {}
    task = suite.tasks["demo/close-account"]
    agent = ReferenceAgent()
    request = RunRequest("kaudit_offload", task, agent.name, run_index=0, seed=1)

    async def run() -> tuple[str, int]:
        result = await run_pipeline(request, agent, substrate)  # type: ignore[arg-type]
        return result.record.status, threading.get_ident()

    status, loop_thread = asyncio.run(run())
    return substrate.threads, loop_thread, status


@pytest.mark.postgres
def test_postgres_seed_dump_and_drop_run_in_worker_threads(mini_suite: Suite) -> None:
    """Fails if a clone, dump or drop runs on the event loop (then `--concurrency` cannot
    overlap them: every run in flight waits for each one)."""
    world = get_world("mini")
    blueprint = Blueprint("mini", world.template_image(), world.toolset(), {})
    threads, loop, status = phase_threads(NotingPostgres(server_url(), blueprint), mini_suite)
    assert status == "labeled"
    assert set(threads) == set(PHASES) and loop not in threads.values()


def test_sqlite_seed_dump_and_close_stay_on_the_loop(mini_suite: Suite) -> None:
    """Fails if the SQLite path pays a thread hop per phase for sub-millisecond work."""
    world = get_world("mini")
    substrate = NotingSqlite("mini", world.template_image(), world.toolset())
    threads, loop, status = phase_threads(substrate, mini_suite)
    assert status == "labeled"
    assert threads == {phase: loop for phase in PHASES}
