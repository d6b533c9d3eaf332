"""Every user error is one line on stderr and exit 2, never a traceback, for the real command.

The table runs the console-script entry point `main()` in this process (an exception
escaping it fails the test); the full disk needs a child with a file-size limit.
"""

from __future__ import annotations

import json
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kaudit.cli.main import main
from tests.conftest import FIXTURES
from tests.ledger.conftest import run_ledger
from tests.ledger.test_agentrelbench_import import ROW

ROOT = Path(__file__).parent.parent.parent
LAUNCH = "import tests.mini_world; from kaudit.cli.main import main; main()"


def kaudit(
    *args: str, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=preexec,
    )


def broken(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE runs SET record = replace(record, '\"seed\":', '\"seed\": ') WHERE seq = 2"
    )
    conn.commit()
    conn.close()
    return path


def verdicts(path: Path, rows: int) -> Path:
    lines = [json.dumps({**ROW, "run": f"run_{i}", "task_id": f"t{i % 7}"}) for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def small_files(limit: int = 48 * 1024) -> Callable[[], None]:
    """A 'full disk' for the child: files may not grow past `limit` (EFBIG, not a signal)."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


# (case id, arguments with {ledger}/{empty}/{broken}/{tmp} placeholders, words the line names)
CASES: list[tuple[str, list[str], str]] = [
    ("export-format", ["ledger", "export", "{ledger}", "--format", "xml"], "'xml' is not one of"),
    ("plan-p-above-1", ["plan", "--p", "2"], "--p must be in (0, 1], got 2.0"),
    ("plan-p-zero", ["plan", "--p", "0"], "--p must be in (0, 1], got 0.0"),
    ("plan-p-too-small", ["plan", "--p", "5e-324"], "too small"),
    ("plan-detect", ["plan", "--p", "0.1", "--detect", "1"], "--detect must be in (0, 1)"),
    ("stats-k-zero", ["stats", "{ledger}", "--k", "0"], "--k must be whole numbers >= 1"),
    ("stats-alpha", ["stats", "{ledger}", "--alpha", "1.5"], "--alpha must be in (0, 1)"),
    ("report-alpha-zero", ["report", "{ledger}", "--alpha", "0"], "--alpha must be in (0, 1)"),
    ("report-empty-file", ["report", "{empty}"], "not a kaudit ledger (an empty file"),
    ("report-broken", ["report", "{broken}"], "hash chain broken at record 2"),
    ("stats-broken", ["stats", "{broken}"], "hash chain broken at record 2"),
    ("verify-broken", ["ledger", "verify", "{broken}"], "hash chain broken at record 2"),
    (
        "verify-bad-head",
        ["ledger", "verify", "{ledger}", "--head", "nope"],
        "--head 'nope' is neither",
    ),
    ("head-missing", ["ledger", "head", "{tmp}/missing.sqlite"], "no such ledger file"),
    ("run-k-zero", ["run", "--k", "0", "--ledger", "{tmp}/new.sqlite"], "--k"),
    ("run-unknown-agent", ["run", "--agent", "nosuch", "--ledger", "{tmp}/n.sqlite"], "nosuch"),
    (
        "import-no-equals",
        ["ledger", "import", "--ledger", "{tmp}/i.sqlite", "--model-file", "x"],
        "--model-file must look like MODEL=PATH",
    ),
    (
        "import-missing-file",
        ["ledger", "import", "--ledger", "{tmp}/i.sqlite", "--model-file", "m={tmp}/none"],
        "cannot read",
    ),
    ("migrate-foreign", ["ledger", "migrate", "{empty}"], "not a kaudit ledger"),
    ("keygen-exists", ["ledger", "keygen", "{empty}"], "already exists"),
    ("unknown-command", ["frobnicate"], "No such command 'frobnicate'"),
    ("export-broken", ["export", "{broken}"], "hash chain broken at record 2"),
    ("ledger-export-broken", ["ledger", "export", "{broken}"], "hash chain broken at record 2"),
    ("stats-same-ledger-twice", ["stats", "{ledger}", "{ledger}"], "is given twice"),
    ("report-unknown-campaign", ["report", "{ledger}", "--campaign", "nope"], "no campaign"),
    (
        "ledger-export-unknown-campaign",
        ["ledger", "export", "{ledger}", "--campaign", "nope"],
        "no campaign 'nope'",
    ),
    (
        "run-until-alpha",
        ["run", "--until", "damage", "--until-alpha", "2", "--ledger", "{tmp}/u.sqlite"],
        "--until-alpha must be in (0, 1)",
    ),
    (  # the library names `faults` and `tools_tag`; the CLI's table writes the flags
        "run-unknown-fault",
        ["run", "--faults", "nope", "--ledger", "{tmp}/f.sqlite"],
        "--faults names an unknown fault 'nope'",
    ),
    (
        "run-tools-tag-without-a-server",
        [
            "run",
            "--agent",
            "command",
            "--agent-command",
            "true",
            "--tools-tag",
            "q=read",
            "--ledger",
            "{tmp}/t.sqlite",
        ],
        "--tools-tag needs --tools-command",
    ),
    (
        "run-agent-command-with-a-built-in-agent",
        ["run", "--agent", "reference", "--agent-command", "echo hi", "--ledger", "{tmp}/c.sqlite"],
        "--agent-command needs an external agent (--agent of kind mcp or command)",
    ),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("bad-input")
    ledger = run_ledger(tmp / "audit.sqlite", k=3)
    empty = tmp / "empty.sqlite"
    empty.touch()
    return {
        "ledger": str(ledger),
        "broken": str(broken(run_ledger(tmp / "broken.sqlite", k=3))),
        "empty": str(empty),
        "tmp": str(tmp),
    }


@pytest.mark.parametrize(("case", "args", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(
    places: dict[str, str],
    case: str,
    args: list[str],
    words: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A ValueError, an OSError or a usage box of many lines would fail this."""
    monkeypatch.setattr(sys, "argv", ["kaudit", *(arg.format(**places) for arg in args)])
    with pytest.raises(SystemExit) as exited:
        main()
    stderr = capsys.readouterr().err
    assert exited.value.code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ") and words in lines[0], lines[0]


def test_a_full_disk_is_one_line_and_exit_2_with_nothing_half_written(tmp_path: Path) -> None:
    """The ledger write's OSError / SQLITE_FULL used to end in a traceback."""
    source = verdicts(tmp_path / "v.jsonl", 400)
    ledger = tmp_path / "full.sqlite"
    result = kaudit(
        "ledger", "import", "--ledger", str(ledger), "--model-file", f"m={source}",
        preexec=small_files(),
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "full" in line, line
    with sqlite3.connect(ledger) as conn:  # the one transaction rolled back
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_plan_with_a_tiny_p_returns_the_closed_form() -> None:
    """`plan --p 1e-13` used to step k one at a time and never return."""
    result = kaudit("plan", "--p", "1e-13", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["runs"] == 29957322735529


def test_report_no_verify_says_so(places: dict[str, str]) -> None:
    """Numbers from an unverified ledger must never look like verified ones."""
    result = kaudit("report", places["broken"], "--no-verify")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("note: --no-verify: the ledger's hash chain was not checked")
    as_json = kaudit("report", places["broken"], "--no-verify", "--json")
    assert json.loads(as_json.stdout)["verified"] is False
    stats = kaudit("stats", places["broken"], "--no-verify")
    assert stats.returncode == 0 and "--no-verify" in stats.stdout


def test_report_json_has_no_bare_nan(tmp_path: Path) -> None:
    """json.dumps writes NaN for an empty cell's p̂, which strict parsers reject."""
    path = verdicts(tmp_path / "v.jsonl", 1)
    text = path.read_text().replace('"FAIL_DAMAGE"', '"INVALID"')
    path.write_text(text)
    ledger = tmp_path / "l.sqlite"
    assert (
        kaudit("ledger", "import", "--ledger", str(ledger), "--model-file", f"m={path}").returncode
        == 0
    )
    result = kaudit("report", str(ledger), "--json")
    assert result.returncode == 0, result.stderr
    cell = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(name))["cells"][0]
    assert cell["n"] == 0 and cell["phat"] is None


def test_a_full_disk_during_kaudit_run_is_one_error_line(tmp_path: Path) -> None:
    """A failed append inside the executor's task group surfaced as an ExceptionGroup trace."""
    ledger = tmp_path / "full.sqlite"
    result = kaudit(
        "run", "--suite", str(FIXTURES / "mini_suite"), "--k", "2000", "--concurrency", "2",
        "--ledger", str(ledger), preexec=small_files(256 * 1024),
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stderr
    note, error = result.stderr.strip().splitlines()
    assert note.startswith("note: simulated agent")
    assert error.startswith(f"error: {ledger}: cannot write ("), error
    with sqlite3.connect(ledger) as conn:  # it got some runs in before the disk filled
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] > 0
