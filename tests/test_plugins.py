"""Third-party extensions load through entry points, from a real (uninstalled) package."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kaudit
from kaudit.agents import ScriptedAgent
from kaudit.agents._registry import make_agent
from kaudit.cli.main import app
from kaudit.harness._choose import EXECUTORS
from kaudit.ledger import Ledger
from kaudit.spec import Identity
from kaudit.substrate._choice import SUBSTRATES
from kaudit.suites import load_suite
from kaudit.worlds._world import get_world

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture
def plugin_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGINS))
    importlib.invalidate_caches()


def test_world_agent_and_suite_come_from_entry_points(plugin_on_path: None) -> None:
    assert get_world("doors").name == "doors"
    assert make_agent("always-refuse").name == "simulated:scripted:refuse"
    suite = load_suite("doors:anything")
    assert list(suite.tasks) == ["doors/open-d1"]


def test_plugin_suite_validates_and_audits_from_the_cli(
    plugin_on_path: None, tmp_path: Path
) -> None:
    runner = CliRunner()
    validated = runner.invoke(app, ["validate", "--suite", "doors:x"])
    assert validated.output.strip().splitlines()[-1] == "3 passed, 0 failed", validated.output
    ledger = str(tmp_path / "l.sqlite")
    args = ["run", "--suite", "doors:x", "--agent", "always-refuse", "--k", "2", "--ledger", ledger]
    assert runner.invoke(app, args).exit_code == 0
    cells = json.loads(runner.invoke(app, ["report", ledger, "--json"]).output)["cells"]
    assert [(c["model"], c["n"], c["damage"], c["success"]) for c in cells] == [
        ("simulated:scripted:refuse", 2, 0, 0)
    ]


@pytest.fixture
def forgotten_after(monkeypatch: pytest.MonkeyPatch) -> None:
    """The substrate and executor registries forget what the test loaded from the plugin,
    so later tests see kaudit's own entries only."""
    for registry in (SUBSTRATES, EXECUTORS):
        registry.names()  # the built-ins, loaded before the copy that is thrown away
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))


def test_a_plugin_substrate_and_executor_carry_an_audit_from_the_cli(
    plugin_on_path: None, forgotten_after: None, tmp_path: Path
) -> None:
    """Bug caught: `--substrate` or `--executor` keeping a closed list of names (the
    executor was `Literal["local", "ray"]`), a registered one found but bypassed (runs
    seeded by the built-in SQLite substrate, scheduled by the local executor), or the
    manifest naming kaudit's own instead of what really ran."""
    from kaudit_demo_plugin import in_order, scratch

    seeded, ran = len(scratch.SEEDED), len(in_order.RAN)
    ledger = tmp_path / "l.sqlite"
    args = ["run", "--suite", "doors:x", "--agent", "always-refuse", "--k", "3"]
    plugged = ["--substrate", "scratch", "--executor", "in-order", "--ledger", str(ledger)]
    done = CliRunner().invoke(app, [*args, *plugged])
    assert done.exit_code == 0, done.output
    assert [key[3] for key in in_order.RAN[ran:]] == [0, 1, 2]
    cell = "default/simulated:scripted:refuse/doors/open-d1"
    assert [run for run in scratch.SEEDED[seeded:] if run.startswith("default/")] == [
        f"{cell}/{index}" for index in range(3)
    ]
    with Ledger(ledger) as store:
        manifest = store.manifest("default")
        runs = [(r.run_index, r.outcome) for r in store.records()]
    assert manifest is not None
    assert manifest["executor"] == {"kind": "in-order", "plugin": "kaudit-demo-plugin"}
    assert manifest["substrate"]["doors"]["kind"] == "ScratchSubstrate"
    assert runs == [(0, "FAIL_SAFE"), (1, "FAIL_SAFE"), (2, "FAIL_SAFE")]


def test_a_plugin_substrate_enforces_an_identity_with_its_own_guard(
    plugin_on_path: None, forgotten_after: None, tmp_path: Path
) -> None:
    """Bug caught: `guard_for` ignoring the sandbox's own guard (choosing by type, it
    refused every plugin sandbox, so every run was INVALID, or handed one over SQLite's
    `SqliteDb` SQLite's authorizer, whose reason differs), the boundary layer keeping a
    write the guard refused (D2 open: damage), or the attempt going unrecorded."""
    from kaudit_demo_plugin import in_order, scratch

    seeded, ran = len(scratch.SEEDED), len(in_order.RAN)
    done = kaudit.audit(
        "doors:x",
        [ScriptedAgent("both")],  # opens D1 (ann's), then D2 (bob's)
        ledger=tmp_path / "l.sqlite",
        k=2,
        identity=Identity(role="ann", scope={"owner": "ann"}),
        substrate="scratch",
        executor="in-order",
    )
    assert (done.recorded, len(in_order.RAN) - ran) == (2, 2)
    assert len([r for r in scratch.SEEDED[seeded:] if r.startswith("default/")]) == 2
    with Ledger(done.ledger) as store:
        records = list(store.records())
    assert [(r.outcome, r.success, r.identity) for r in records] == [("PASS", True, "ann")] * 2
    for record in records:
        [attempt] = record.boundary_attempts
        assert (attempt.tool, attempt.table, attempt.key, attempt.reason) == (
            "open_door",
            "door",
            '["D2"]',
            'scratch: door ["D2"] has owner bob, not ann',
        )
