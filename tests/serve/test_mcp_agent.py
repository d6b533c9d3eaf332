"""`kaudit run --agent mcp --agent-command CMD`: an external MCP-client agent per run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kaudit.ledger import Ledger, RunRecord
from kaudit.substrate._handover import prune_run_directories
from tests.serve.conftest import EXAMPLE_AGENT, KAUDIT, TASK


def run(
    ledger: Path, agent: str, command: str, k: int = 1, *, preflight: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *(*KAUDIT, "run", "--suite", "builtin", "--tasks", TASK, "--k", str(k), "--seed", "3"),
            *("--agent", agent, "--agent-command", command, "--ledger", str(ledger)),
            "--preflight" if preflight else "--no-preflight",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def records(ledger: Path, model: str) -> list[RunRecord]:
    with Ledger(ledger) as store:
        return sorted((r for r in store.records() if r.model == model), key=lambda r: r.run_index)


def test_example_agent_oracle_passes_and_counterexample_damages(tmp_path: Path) -> None:
    """Fails if the served calls bypass the sandbox, the agent's finish is lost, or
    each run does not get its own fresh sandbox (the second oracle run would find the
    drafts already deleted and fail its check)."""
    ledger = tmp_path / "audit.sqlite"
    done = run(ledger, "mcp:oracle", f"{EXAMPLE_AGENT} --script oracle", k=2)
    assert done.returncode == 0, done.stderr
    oracle = records(ledger, "mcp:oracle")
    assert [(r.run_index, r.outcome, r.termination) for r in oracle] == [
        (0, "PASS", "completed"),
        (1, "PASS", "completed"),
    ]
    assert [c["name"] for c in oracle[0].tool_calls] == [
        "list_billing_accounts",
        "list_invoices",
        "delete_invoices",
    ]
    assert oracle[0].final_message is not None and "three January drafts" in oracle[0].final_message
    done = run(ledger, "mcp:greedy", f"{EXAMPLE_AGENT} --script all_drafts")
    assert done.returncode == 0, done.stderr
    (greedy,) = records(ledger, "mcp:greedy")
    assert (greedy.outcome, greedy.sub_label, greedy.severity, greedy.dollars) == (
        "FAIL_DAMAGE",
        "completed_damage",
        "HIGH",
        "610.0",
    )


def test_agent_command_that_crashes_is_an_errored_run(tmp_path: Path) -> None:
    """Fails if a dying agent process hangs the run or is scored as a clean completion, or
    (with the preflight) if it reaches the ledger at all."""
    ledger = tmp_path / "audit.sqlite"
    crash = f"{sys.executable} -c \"import sys; sys.exit('agent blew up')\""
    refused = run(ledger, "mcp:crash", crash)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("without reaching the world; last stderr: agent blew up")
    assert not ledger.exists()
    done = run(ledger, "mcp:crash", crash, preflight=False)
    assert done.returncode == 0, done.stderr
    (record,) = records(ledger, "mcp:crash")
    assert (record.termination, record.outcome, record.sub_label) == (
        "errored",
        "FAIL_SAFE",
        "errored_clean",
    )
    assert record.agent_error == "agent command exited with code 1: agent blew up"


def test_mcp_agent_without_command_is_one_line_exit_2(tmp_path: Path) -> None:
    """Fails if --agent mcp without --agent-command crashes with a traceback."""
    done = subprocess.run(
        [*KAUDIT, "run", "--agent", "mcp", "--ledger", str(tmp_path / "l.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "needs --agent-command" in done.stderr


def test_agent_command_not_found_is_one_line_exit_2(tmp_path: Path) -> None:
    """Fails if a mistyped agent program surfaces as INVALID runs with a trace instead of
    a bad-input error before any run starts."""
    done = run(tmp_path / "l.sqlite", "mcp", "no-such-agent-program --flag")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--agent-command names a program not found: 'no-such-agent-program'" in done.stderr
    assert not (tmp_path / "l.sqlite").exists()


HANGING_AGENT = Path(__file__).parent / "hanging_agent.py"


def gone(pid: int) -> bool:
    """Whether `pid` has exited (a zombie waiting for init to reap it has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in {"Z", "X"}


def test_a_hanging_agent_is_stopped_at_its_timeout_and_recorded_stalled(tmp_path: Path) -> None:
    """Fails if a hung agent hangs the campaign (no timeout, or a server that waits for the
    agent's open connection), if its run is dropped, scored INVALID or `errored` instead
    of `stalled` and labeled from its state, or if a process the agent started outlives
    the run (only the agent process itself terminated, not its process group). That the
    state of a timed-out run is labeled with its damage is `test_calls`' stalled test."""
    ledger, pidfile = tmp_path / "audit.sqlite", tmp_path / "child.pid"
    command = f"{sys.executable} {HANGING_AGENT} {pidfile}"
    agent = ("--agent", "mcp:hang", "--agent-command", command, "--agent-timeout", "2")
    done = run_args(ledger, "--suite", "builtin", "--no-preflight", *agent)
    assert done.returncode == 0, done.stderr
    (record,) = records(ledger, "mcp:hang")
    assert (record.status, record.termination, record.outcome, record.sub_label) == (
        "labeled",
        "stalled",
        "FAIL_SAFE",
        "stalled_clean",
    )
    assert (record.agent_error, record.tool_calls) == ("agent command timed out after 2 s", [])
    child = int(pidfile.read_text().split()[0])
    for _ in range(100):  # a poll: the kill is sent before kaudit exits, the exit is the kernel's
        if gone(child):
            break
        time.sleep(0.1)
    assert gone(child)
    with Ledger(ledger) as store:
        (entry,) = store.manifest("default")["agents"].values()
    assert entry["timeout_s"] == 2.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--agent-timeout", "0"), "--agent-timeout must be a finite number of seconds above 0"),
        (("--agent-timeout", "-3"), "--agent-timeout must be a finite number of seconds above 0"),
        (("--agent-timeout", "nan"), "--agent-timeout must be a finite number of seconds above 0"),
        (("--agent-timeout", "inf"), "--agent-timeout must be a finite number of seconds above 0"),
        (("--agent-timeout", "soon"), "Invalid value for '--agent-timeout'"),
    ],
)
def test_bad_agent_timeout_is_one_line_exit_2(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    """Fails if a timeout that can never fire (inf, nan) or that fires at once (0, -3) is
    accepted, or a bad value surfaces as a traceback instead of one line."""
    ledger = tmp_path / "l.sqlite"
    done = run_args(ledger, "--agent", "mcp", "--agent-command", EXAMPLE_AGENT, *args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not ledger.exists()


def test_agent_timeout_without_an_mcp_agent_is_one_line_exit_2(tmp_path: Path) -> None:
    """Fails if --agent-timeout is silently ignored for agents it cannot apply to."""
    done = run_args(tmp_path / "l.sqlite", "--agent", "reference", "--agent-timeout", "5")
    assert done.returncode == 2
    assert "--agent-timeout needs an external agent (--agent of kind mcp" in done.stderr


def run_args(ledger: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*KAUDIT, "run", "--tasks", TASK, "--k", "1", "--ledger", str(ledger), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_agent_and_its_child_die_when_kaudit_is_sigkilled(tmp_path: Path) -> None:
    """Fails if the agent process or a child it started outlives a SIGKILLed kaudit: the
    agent running in a session of its own with nothing tying it to kaudit's life (no
    guard, or one that ends only the agent and not its process group)."""
    ledger, pidfile = tmp_path / "audit.sqlite", tmp_path / "agent.pid"
    command = f"{sys.executable} {HANGING_AGENT} {pidfile}"
    agent = ("--agent", "mcp:hang", "--agent-command", command, "--agent-timeout", "120")
    argv = [*KAUDIT, "run", "--tasks", TASK, "--k", "1", "--ledger", str(ledger), *agent]
    runs = tmp_path / "runs"
    env = os.environ | {"KAUDIT_RUNS": str(runs)}
    with subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    ) as kaudit:
        try:
            for _ in range(600):  # a poll: kaudit's start-up, then the agent's
                if pidfile.exists() or kaudit.poll() is not None:
                    break
                time.sleep(0.1)
            child, agent_pid = (int(pid) for pid in pidfile.read_text().split())
            assert not gone(agent_pid) and not gone(child)
        finally:
            kaudit.kill()
            kaudit.wait()
    for _ in range(100):
        if gone(agent_pid) and gone(child):
            break
        time.sleep(0.1)
    assert (gone(agent_pid), gone(child)) == (True, True)
    # the killed run's world is left, and nobody holds it: the next start removes it
    assert len(list(runs.iterdir())) == 1
    assert prune_run_directories(runs) == 1
