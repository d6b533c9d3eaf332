"""The `kaudit` command: one module per command group, each a thin layer over the library."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer

from kaudit.cli._common import err_console

app = typer.Typer(
    name="kaudit",
    help="Audit action-taking LLM agents by the damage they leave in real state.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

COMMAND_MODULES = (
    "run",
    "report",
    "validate",
    "tasks",
    "stats",
    "ledger",
    "gate",
    "export",
    "monitor",
    "mcp",
    "inspect_log",
    "substrate",
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"kaudit.cli.{name}")
        module.register(app)


_register_all()


def main() -> None:
    """Console-script entry point: every usage error is one line on stderr and exit 2.

    Click would print a usage box of several lines; scripts and humans both want the
    one line that says what was wrong.
    """
    try:
        code = app(standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("interrupted", highlight=False)
        sys.exit(130)
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            shown: Any = exc  # a bare group asks for its help text; `show` prints it
            shown.show()
            sys.exit(0)
        message = " ".join(exc.format_message().split())
        err_console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
