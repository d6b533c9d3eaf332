"""The lazy top-level group: the same commands and help as registering every module."""

from __future__ import annotations

import subprocess
import sys

import typer
from typer.testing import CliRunner

from kaudit.cli.main import COMMAND_MODULES, COMMANDS, app, eager_app, register_module

runner = CliRunner()


def test_the_command_map_is_what_each_module_registers() -> None:
    """Fails if a module gains (or loses) a command the map does not name, which the lazy
    group would then never find, or if the map sends a command to the wrong module."""
    found: dict[str, str] = {}
    for name in COMMAND_MODULES:
        commands = typer.Typer()
        register_module(commands, name)
        for command in typer.main.get_group(commands).commands:
            found[command] = name
    assert found == COMMANDS
    eager = typer.main.get_group(eager_app())
    assert list(eager.commands) == list(COMMANDS)  # the order --help lists them in


def test_help_is_the_same_as_with_every_module_registered() -> None:
    """Fails if the lazy group lists fewer commands, in another order, or other help."""
    for args in (["--help"], ["report", "--help"], ["ledger", "--help"], ["prereg", "--help"]):
        lazy = runner.invoke(app, args, env={"COLUMNS": "100"})
        eager = runner.invoke(eager_app(), args, env={"COLUMNS": "100"})
        assert lazy.exit_code == eager.exit_code == 0
        assert lazy.output == eager.output
    assert "substrate" in runner.invoke(app, ["--help"]).output


def test_a_command_imports_only_its_own_module() -> None:
    """`kaudit report` must not pay for the harness, agents and servers it never uses.

    Fails if `main` imports every command module again (about 0.3 s of each command).
    """
    code = (
        "import sys; from kaudit.cli.main import app; "
        "app(['report', '--help'], standalone_mode=False); "
        "print(sorted(m for m in sys.modules if m.startswith('kaudit.cli.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = done.stdout.strip().splitlines()[-1]
    assert "'kaudit.cli.report'" in loaded
    assert "kaudit.cli.run" not in loaded and "kaudit.cli.mcp" not in loaded


def test_a_mistyped_command_still_gets_a_suggestion() -> None:
    """Fails if an unknown name is looked up only among the modules loaded so far."""
    result = runner.invoke(app, ["reprot"])
    assert result.exit_code == 2
    assert "Did you mean 'report'" in result.output
