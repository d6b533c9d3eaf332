"""Your own world from a directory: the worked example end to end, and bad directories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import SpecError, SuiteError
from kaudit.suites import load_suite
from kaudit.worlds import World
from kaudit.worlds._directory import DirectoryWorld
from tests.pg import server_url

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriptions"
runner = CliRunner()


@pytest.fixture
def world_copy(tmp_path: Path) -> Path:
    target = tmp_path / "w"
    shutil.copytree(EXAMPLE, target)
    return target


def test_the_example_is_a_world_and_its_tasks_run_on_it() -> None:
    """Bug caught: a task of the directory offered tools or a template from another world."""
    world = DirectoryWorld.load(EXAMPLE)
    assert isinstance(world, World)
    assert sorted(world.tools) == [
        "cancel_all_subscriptions",
        "cancel_subscription",
        "delete_customer",
        "find_customers",
        "list_charges",
        "list_subscriptions",
        "refund_charge",
    ]
    assert world.tools["refund_charge"].tag == "irreversible"
    suite = load_suite(f"world:{EXAMPLE}")
    assert sorted(suite.tasks) == ["subs/cancel-team-plan", "subs/refund-duplicate-charge"]
    substrate = suite.substrate(suite.tasks["subs/cancel-team-plan"])
    assert substrate.template.digest == substrate.template_digest
    conn = substrate.template.open()
    assert conn.execute("SELECT COUNT(*) FROM subscriptions").fetchone() == (4,)


def test_the_readme_commands_validate_and_audit_the_example(tmp_path: Path) -> None:
    """Bug caught: the documented commands fail, or the reference agent's damage is not recorded."""
    validated = runner.invoke(app, ["validate", "--suite", f"world:{EXAMPLE}"])
    assert validated.exit_code == 0, validated.output
    assert validated.output.strip().splitlines()[-1] == "7 passed, 0 failed"
    ledger = str(tmp_path / "own.sqlite")
    args = ["run", "--suite", f"world:{EXAMPLE}", "--agent", "reference", "--k", "20"]
    ran = runner.invoke(app, [*args, "--seed", "1", "--ledger", ledger])
    assert ran.exit_code == 0, ran.output
    cells = json.loads(runner.invoke(app, ["report", ledger, "--json"]).output)["cells"]
    assert {c["task"]: c["n"] for c in cells} == {
        "subs/cancel-team-plan": 20,
        "subs/refund-duplicate-charge": 20,
    }
    assert all(0 < c["damage"] < 20 for c in cells)


@pytest.mark.postgres
def test_the_example_validates_on_postgresql() -> None:
    """Bug caught: the example's SQL or tools only work on SQLite."""
    url = server_url()
    validated = runner.invoke(app, ["validate", "--suite", f"world:{EXAMPLE}", "--substrate", url])
    assert validated.output.strip().splitlines()[-1] == "7 passed, 0 failed", validated.output


def test_editing_the_tools_changes_the_suite_digest(world_copy: Path) -> None:
    """Bug caught: a resumed campaign silently mixes runs from before and after a tool change."""
    before = load_suite(f"world:{world_copy}").digest
    tools = world_copy / "tools.py"
    tools.write_text(tools.read_text().replace("cannot be recalled", "is final"))
    assert load_suite(f"world:{world_copy}").digest != before


@pytest.mark.parametrize(
    ("edit", "error", "message"),
    [
        (lambda d: (d / "world.yaml").unlink(), SpecError, "world.yaml: <file>: a world directory"),
        (
            lambda d: (d / "world.yaml").write_text("name: x\nseed: s.sql\n"),
            SpecError,
            "world.yaml: seed:",
        ),
        (
            lambda d: (d / "tools.py").write_text("import no_such_module\n"),
            SpecError,
            "tools.py: <module>: ModuleNotFoundError",
        ),
        (
            lambda d: (d / "tools.py").write_text("X = 1\n"),
            SpecError,
            "defines no @tool function",
        ),
        (
            lambda d: (d / "schema.sql").write_text("CREATE TABLE broken (;"),
            SpecError,
            "schema.sql: <sql>:",
        ),
        (
            lambda d: (d / "world.yaml").write_text("name: other\nschema_file: schema.sql\n"),
            SuiteError,
            "world is 'subscriptions', not 'other'",
        ),
    ],
)
def test_a_bad_world_directory_names_the_file(
    world_copy: Path, edit: object, error: type[Exception], message: str
) -> None:
    """Bug caught: a broken world surfaces as a traceback or names the wrong file."""
    edit(world_copy)  # type: ignore[operator]
    with pytest.raises(error, match=message.replace("(", r"\(")):
        suite = load_suite(f"world:{world_copy}")
        suite.substrate(next(iter(suite.tasks.values()))).template  # noqa: B018


def test_a_bad_world_is_one_line_and_exit_2_on_the_cli(world_copy: Path) -> None:
    """Bug caught: the CLI prints a traceback for a user's broken tools module."""
    (world_copy / "tools.py").write_text("raise RuntimeError('boom')\n")
    result = runner.invoke(app, ["validate", "--suite", f"world:{world_copy}"])
    assert result.exit_code == 2
    assert "tools.py: <module>: RuntimeError: boom" in result.output
    assert "Traceback" not in result.output


ROOT = Path(__file__).resolve().parents[2]


def _console_lines(text: str, command: str) -> list[str]:
    """The output lines printed under `$ command` in a console block of `text`."""
    lines = text.split(f"$ {command}\n", 1)[1].splitlines()
    return lines[: next(i for i, line in enumerate(lines) if line.startswith(("$", "```")))]


def _summary_line(output: str) -> str:
    """The run's summary line (the ledger head line that follows it changes every run)."""
    return next(line for line in output.splitlines() if " runs recorded (" in line)


def test_the_docs_show_the_real_files_and_the_real_output(tmp_path: Path) -> None:
    """Bug caught: docs that drift from the example's files or from what the commands print."""
    doc = (ROOT / "docs" / "own-world.md").read_text()
    assert f"```yaml\n{(EXAMPLE / 'world.yaml').read_text()}```" in doc
    excerpt = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert excerpt in (EXAMPLE / "tools.py").read_text()
    validate = "kaudit validate --suite world:examples/subscriptions"
    real = runner.invoke(app, ["validate", "--suite", f"world:{EXAMPLE}"]).output.splitlines()
    assert _console_lines(doc, validate) == real
    run = (
        "kaudit run --suite world:examples/subscriptions --agent reference --k 20 --seed 1 "
        "--ledger own.sqlite"
    )
    ledger = tmp_path / "own.sqlite"
    args = ["run", "--suite", f"world:{EXAMPLE}", "--agent", "reference", "--k", "20"]
    out = runner.invoke(app, [*args, "--seed", "1", "--ledger", str(ledger)]).output
    summary = _summary_line(out).replace(str(ledger), "own.sqlite")
    assert _console_lines(doc, run) == [summary]


def test_the_postgresql_docs_show_what_the_command_prints(tmp_path: Path) -> None:
    """Bug caught: a stale run count in the docs. The SQLite run prints the same line as
    the PostgreSQL one (verdict equality is tested in tests/cli/test_run_substrate.py)."""
    pg_doc = (ROOT / "docs" / "postgresql.md").read_text()
    ledger = tmp_path / "L"
    args = ["run", "--suite", "builtin", "--agent", "reference", "--k", "3", "--seed", "11"]
    out = runner.invoke(app, [*args, "--ledger", str(ledger)]).output
    summary = _summary_line(out).replace(str(ledger), "L")
    tasks = len(load_suite("builtin").tasks)
    assert summary.startswith(f"{3 * tasks} runs recorded")
    assert f"\n{summary}\n" in pg_doc
