"""The `kaudit` command: one module per command group, each a thin layer over the library."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="kaudit",
    help="Audit action-taking LLM agents by the damage they leave in real state.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

COMMAND_MODULES = ("run", "report", "validate", "tasks", "stats", "ledger", "mcp", "inspect_log")


def _register_all() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"kaudit.cli.{name}")
        module.register(app)


_register_all()


def main() -> None:
    """Console-script entry point."""
    app()
