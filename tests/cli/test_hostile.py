"""The hostile-input corpus: every file and argument an adversary tried, with its one line.

Each case runs the console-script entry point `main()` in this process on a fixture of
`tests/fixtures/hostile/` and must end in exactly one `error: ...` line naming what was
wrong and exit 2, before anything is written. Cases that load and then fail at run time
(a check that errors or never ends) must make the run INVALID with the check named.
Only the Ctrl-C cases need a child process: they send it a real SIGINT.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kaudit.cli.main import main
from kaudit.ledger import Ledger
from tests.conftest import FIXTURES
from tests.ledger.conftest import run_ledger

HOSTILE = FIXTURES / "hostile"
TASKS = HOSTILE / "tasks"
ROOT = Path(__file__).parent.parent.parent


def validate(case: str) -> list[str]:
    return ["validate", "--suite", str(TASKS / case), "--no-variants"]


def gate(*extra: str) -> list[str]:
    return ["gate", "{ledger}", "--authority", "propose", *extra]


def run(*extra: str) -> list[str]:
    return ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", "1", *extra]


def run_with(option: str, folder: str, name: str) -> list[str]:
    """`kaudit run` given the hostile file `folder/name` as `option` (--identity, --agent)."""
    return run(option, f"{{hostile}}/{folder}/{name}", "--ledger", f"{{tmp}}/{folder[0]}.sqlite")


def gate_policy(name: str) -> list[str]:
    """`kaudit gate` of the audit ledger under the hostile policy file `name`."""
    return ["gate", "{ledger}", "--authority", "propose", "--policy", f"{{hostile}}/policy/{name}"]


def monitor(events: str, *extra: str) -> list[str]:
    """`kaudit monitor` of the hostile events file `events` against the audit ledger."""
    return ["monitor", "--audit", "{ledger}", "--events", f"{{hostile}}/events/{events}", *extra]


# (case id, argv with {ledger}/{tmp}/{hostile} placeholders, words the one line must hold)
CASES: list[tuple[str, list[str], str]] = [
    ("task-alias-bomb", validate("alias-bomb"), "task.yaml: line 2: aliases (*name) are not"),
    (
        "task-duplicate-key",
        validate("duplicate-key"),
        "task.yaml: line 3: duplicate key 'vertical'",
    ),
    ("task-nested-5000", validate("nested-5000"), "nested more than 64 levels deep"),
    (
        "tasks-list-nested-5000",
        ["tasks", "list", "--suite", str(TASKS / "nested-5000")],
        "nested more than 64 levels deep",
    ),
    (
        "run-nested-5000",
        ["run", "--suite", str(TASKS / "nested-5000"), "--ledger", "{tmp}/n.sqlite"],
        "nested more than 64 levels deep",
    ),
    (
        "task-script-arguments-900-deep",
        validate("script-arguments-900-deep"),
        "nested more than 64 levels deep",
    ),
    ("task-nul-byte", validate("nul-byte"), "character #x0000 at position"),
    ("task-not-utf8", validate("not-utf8"), "task.yaml: <file>: not UTF-8 text (byte 0xe9"),
    ("task-huge-integer", validate("huge-integer"), "task.yaml: <yaml>: Exceeds the limit"),
    (
        "task-compare-text-expected",
        validate("compare-text-expected"),
        "checks[0]: check 'target_closed': compare greater_than needs a number as expected",
    ),
    (
        "task-expected-list",
        validate("expected-list"),
        "checks[0].expected: must be one value (text, a number, true/false or null), not a list",
    ),
    (
        "task-dollars-from-text",
        validate("dollars-from-text"),
        "damage.pricing[0].dollars_from: column name of account is declared TEXT",
    ),
    (
        "task-reserved-variant-id",
        ["run", "--suite", str(TASKS / "reserved-variant-id"), "--variants", "--ledger", "{tmp}/v"],
        "id: 'demo/close-account~distractors': '~' is reserved for generated variant ids",
    ),
    ("task-nan-weights", validate("nan-weights"), "reference_weights: oracle: must be a finite"),
    ("task-inf-weights", validate("inf-weights"), "reference_weights: oracle: must be a finite"),
    (
        "task-nan-expected-dollars",
        validate("nan-expected-dollars"),
        "counterexamples[2].expected.dollars: Input should be a finite number",
    ),
    (
        "identity-alias-bomb",
        run_with("--identity", "identity", "alias-bomb.yaml"),
        "alias-bomb.yaml: line 2: aliases",
    ),
    (
        "identity-duplicate-key",
        run_with("--identity", "identity", "duplicate-key.yaml"),
        "duplicate-key.yaml: line 2: duplicate key 'org'",
    ),
    (
        "identity-scope-list",
        run_with("--identity", "identity", "scope-list.yaml"),
        "scope-list.yaml: scope.org: Input should be a valid string",
    ),
    (
        "policy-duplicate-key",
        gate_policy("duplicate-key.yaml"),
        "duplicate-key.yaml: line 4: duplicate key 'propose'",
    ),
    (
        "policy-nan-bound",
        gate_policy("nan-bound.yaml"),
        "max_damage_upper: Input should be a finite number",
    ),
    (
        "model-config-alias",
        run_with("--agent", "model", "alias.yaml"),
        "alias.yaml: line 3: aliases",
    ),
    (
        "model-config-inf-timeout",
        run_with("--agent", "model", "inf-timeout.yaml"),
        "timeout_s: Input should be a finite number",
    ),
    (
        "prereg-bad-yaml",
        ["prereg", "freeze", "{hostile}/prereg/bad-yaml.yaml"],
        "bad-yaml.yaml: line 6:",
    ),
    (
        "events-deep-100000",
        monitor("deep-100000.jsonl"),
        "deep-100000.jsonl: line 1: longer than 65,536 characters",
    ),
    (
        "events-deep-30000",
        monitor("deep-30000.jsonl"),
        "deep-30000.jsonl: line 2: not an event: JSON nested too deeply",
    ),
    (
        "events-huge-dollars",
        monitor("huge-dollars.jsonl"),
        "huge-dollars.jsonl: line 1: dollars: must be at most 1e+15, got 1e+308",
    ),
    (
        "events-huge-integer",
        monitor("huge-integer.jsonl"),
        "huge-integer.jsonl: line 1: not JSON (Exceeds the limit",
    ),
    (
        "events-not-utf8",
        monitor("not-utf8.jsonl"),
        "not-utf8.jsonl: not UTF-8 text (byte at offset 11)",
    ),
    (
        "export-unknown-campaign",
        ["export", "{ledger}", "--campaign", "nosuch"],
        "no campaign 'nosuch'; it holds 'default'",
    ),
    (
        "monitor-unknown-campaign",
        monitor("huge-dollars.jsonl", "--campaign", "nosuch"),
        "no campaign 'nosuch'; it holds 'default'",
    ),
    (
        "gate-unknown-campaign",
        ["gate", "{ledger}", "--authority", "propose", "--campaign", "nosuch"],
        "no campaign 'nosuch'",
    ),
    (
        "gate-garbage-pubkey",
        [
            "gate",
            "{ledger}",
            "--authority",
            "propose",
            "--head",
            "{head}",
            "--pubkey",
            "{hostile}/keys/garbage.pem",
        ],
        "garbage.pem: not a PEM public key",
    ),
    (
        "gate-missing-pubkey",
        [
            "gate",
            "{ledger}",
            "--authority",
            "propose",
            "--head",
            "{head}",
            "--pubkey",
            "{tmp}/none.pem",
        ],
        "none.pem: cannot read the public key",
    ),
    (
        "gate-pubkey-without-head",
        ["gate", "{ledger}", "--authority", "propose", "--pubkey", "{hostile}/keys/garbage.pem"],
        "--pubkey needs --head",
    ),
    ("run-tasks-comma", run("--tasks", ",", "--ledger", "{tmp}/t.sqlite"), "no task ids given"),
    ("validate-tasks-comma", ["validate", "--tasks", ","], "no task ids given"),
    ("run-empty-campaign", run("--campaign", "", "--ledger", "{tmp}/c.sqlite"), "needs a name"),
    (
        "run-scripted-nosuch",
        run("--agent", "scripted:nosuch", "--ledger", "{tmp}/s.sqlite"),
        "scripted:nosuch: task demo/close-account has no script named 'nosuch'; it has oracle,",
    ),
    ("run-unknown-agent", run("--agent", "nosuch", "--ledger", "{tmp}/a.sqlite"), "nosuch"),
    (
        "mcp-port-too-big",
        ["mcp", "serve", "--transport", "http", "--port", "99999"],
        "Invalid value for '--port': Input should be less than or equal to 65535",
    ),
    (
        "mcp-port-negative",
        ["mcp", "serve", "--transport", "http", "--port", "-1"],
        "Invalid value for '--port': Input should be greater than or equal to 0",
    ),
    (
        "postgres-refused",
        run("--substrate", "postgresql://postgres@127.0.0.1:1/test", "--ledger", "{tmp}/p"),
        "127.0.0.1",
    ),
]
WRITES = {"run-tasks-comma", "run-empty-campaign", "run-scripted-nosuch", "run-nested-5000"}
"""Cases that name a ledger: refused before it is created."""


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("hostile")
    ledger = run_ledger(tmp / "audit.sqlite", k=2)
    with Ledger(ledger, readonly=True) as store:
        head = store.head().head
    return {"ledger": str(ledger), "tmp": str(tmp), "hostile": str(HOSTILE), "head": head}


def run_main(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["kaudit", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    out = capsys.readouterr()
    code = exited.value.code
    return code if isinstance(code, int) else 0, out.out, out.err


@pytest.mark.parametrize(("case", "args", "words"), CASES, ids=[c[0] for c in CASES])
def test_hostile_input_is_one_line_and_exit_2(
    places: dict[str, str],
    case: str,
    args: list[str],
    words: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Fails if a case escapes as a traceback, spans lines, exits 0/1/3 or writes a ledger."""
    argv = [arg.format(**places) for arg in args]
    code, _, stderr = run_main(argv, monkeypatch, capsys)
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("note: ")]
    assert code == 2, stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ") and words in lines[0], lines[0]
    if case in WRITES:
        ledger = Path(argv[argv.index("--ledger") + 1])
        assert not ledger.exists()


CHECK_CASES = [
    ("check-vacuum-into", "failed on the final state (OperationalError: cannot VACUUM"),
    ("check-huge-blob", "failed on the final state (DataError: string or blob too big)"),
    ("check-unbounded-cte", "ran past its budget of 20,000,000 SQLite steps"),
]


@pytest.mark.parametrize(("case", "words"), CHECK_CASES, ids=[c[0] for c in CHECK_CASES])
def test_a_check_that_cannot_judge_makes_validate_name_it(
    case: str, words: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fails if the check's error scored the oracle FAIL_SAFE success=false (a verdict)
    instead of an INVALID run naming the check, or if validate replayed every script."""
    code, out, _ = run_main([*validate(case), "--json"], monkeypatch, capsys)
    assert code == 1
    report = json.loads(out)
    oracle, *rest = report["checks"]
    assert oracle["outcome"] is None
    (reason,) = oracle["mismatches"]
    assert reason.startswith("run was INVALID: INVALID_TASK_CHECK: check 'probe' ")
    assert words in reason
    assert [c["mismatches"] for c in rest] == [["not run: a check of this task failed on oracle"]]


def test_a_check_past_its_budget_stops_run_before_any_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fails if `kaudit run` recorded anything for a task whose check never ends: the
    task's own oracle cannot PASS, so the proof `run` replays first refuses the task
    (before it, each run of it was recorded INVALID)."""
    ledger = tmp_path / "cte.sqlite"
    args = ["run", "--suite", str(TASKS / "check-unbounded-cte"), "--agent", "scripted:oracle"]
    code, _, stderr = run_main(
        [*args, "--k", "1", "--max-attempts", "1", "--ledger", str(ledger)], monkeypatch, capsys
    )
    assert code == 2, stderr
    words = " ".join(stderr.split())
    assert "oracle: the task's own oracle does not PASS" in words
    assert "check 'probe' ran past its budget" in words
    assert not ledger.exists()


def test_a_read_only_ledger_is_reported_as_read_only(
    places: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Fails if SQLite's SQLITE_READONLY were reported as "not a kaudit ledger".

    The test runs as whatever user CI has (root ignores file modes), so the ledger is
    opened read-only by SQLite itself: the exact error a read-only disk gives.
    """
    import kaudit.ledger._store as store

    real = sqlite3.connect

    def read_only(path: object, *args: object, **kwargs: object) -> sqlite3.Connection:
        kwargs.pop("uri", None)
        return real(f"file:{path}?mode=ro", *args, uri=True, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.sqlite3, "connect", read_only)
    copy = Path(places["tmp"]) / "readonly.sqlite"
    copy.write_bytes(Path(places["ledger"]).read_bytes())
    code, _, stderr = run_main(run("--k", "3", "--ledger", str(copy)), monkeypatch, capsys)
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("note: ")]
    assert code == 2 and len(lines) == 1, stderr
    assert "readonly.sqlite: read-only, the ledger cannot be written" in lines[0]


LAUNCH = """
import sys, tests.mini_world
import kaudit.label._budget as budget
import kaudit.label.checks as checks
from kaudit.cli.main import main
endless = budget.CheckBudget(steps=10**15, seconds=3600)
original, meter = checks.run_check, budget.Meter.__call__
def run_check(conn, check, params, guard=None, _=None):
    return original(conn, check, params, guard, endless)
def announced(self):
    if not hasattr(self, "announced"):
        self.announced = print("check running", file=sys.stderr, flush=True)
    return meter(self)
checks.run_check, budget.Meter.__call__ = run_check, announced
main()
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_ctrl_c_stops_a_command_inside_an_endless_check(command: str, tmp_path: Path) -> None:
    """Fails if SIGINT only cancelled asyncio's main task: the check holds the event loop,
    so without the interrupt flag the child would run its hour-long check and time out.

    The child announces the check once SQLite runs it (its progress handler's first call),
    so the signal cannot land before the check began.
    """
    suite = str(TASKS / "check-unbounded-cte")
    args = (
        ["validate", "--suite", suite, "--no-variants"]
        if command == "validate"
        else ["run", "--suite", suite, "--k", "1", "--ledger", str(tmp_path / "l.sqlite")]
    )
    child = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stderr is not None
        while "check running" not in child.stderr.readline():
            assert child.poll() is None, "the child ended before its check started"
        child.send_signal(signal.SIGINT)
        _, rest = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
        assert child.stderr is not None
        child.stderr.close()
    assert child.returncode == 130, rest
    assert "Traceback" not in rest and "interrupted" in rest, rest
