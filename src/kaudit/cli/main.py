"""The `kaudit` command: one module per command group, each a thin layer over the library.

A command's module is imported only when that command runs (or when `--help` lists
them all): importing every module would load the harness, the agents, the servers and
their dependencies before `kaudit report` reads a byte, about 0.3 s of a 10,000-run
report.
"""

from __future__ import annotations

import importlib
import sys
import typing
from typing import Any

import typer
from typer.core import TyperGroup

import kaudit.cli._blas  # noqa: F401  (first: it loads numpy with one BLAS thread)
from kaudit.cli._common import err_console, error_line, print_error

COMMANDS: dict[str, str] = {
    "run": "run",
    "report": "report",
    "grade": "grade",
    "validate": "validate",
    "stats": "stats",
    "plan": "stats",
    "analyze": "stats",
    "gate": "gate",
    "gate-schema": "gate",
    "export": "export",
    "monitor": "monitor",
    "import-inspect": "inspect_log",
    "tasks": "tasks",
    "prereg": "stats",
    "ledger": "ledger",
    "simulate": "monitor",
    "mcp": "mcp",
    "substrate": "substrate",
    "world": "world",
}
"""Each top-level command (or group) and the `kaudit.cli` module that registers it, in
`--help` order. `tests/cli/test_main.py` checks it against registering every module."""

COMMAND_MODULES = (
    "run",
    "report",
    "grade",
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
    "world",
)
"""The command modules in registration order (commands, then groups, make `COMMANDS`)."""


def register_module(app: typer.Typer, name: str) -> None:
    """Add the commands of `kaudit.cli.<name>` to `app`."""
    importlib.import_module(f"kaudit.cli.{name}").register(app)


class _LazyGroup(TyperGroup):
    """The top-level group: lists every command, imports a command's module on first use.

    (`ctx` and the command are typer's own click types, which it does not export.)
    """

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            # An unknown name loads every module, so "did you mean" sees every command.
            names = [COMMANDS[cmd_name]] if cmd_name in COMMANDS else COMMAND_MODULES
            for name in names:
                self._load(name)
        return self.commands.get(cmd_name)

    def invoke(self, ctx: Any) -> Any:
        """Run the command; Ctrl-C that reaches here says so (typer alone exits 130 mutely)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            err_console.print("interrupted", highlight=False)
            raise typer.Exit(130) from None

    def _load(self, name: str) -> None:
        commands = typer.Typer(rich_markup_mode=_SETTINGS["rich_markup_mode"])
        register_module(commands, name)
        for command_name, command in typer.main.get_group(commands).commands.items():
            self.commands.setdefault(command_name, readable_types(command))


def readable_types(command: Any) -> Any:
    """Name a repeatable parameter's values by their element type (`<str>`, `<path>`).

    Typer would show a Python annotation (`<list[str]>`) in `--help`, which reads as
    code rather than as what to type.
    """
    for sub in getattr(command, "commands", {}).values():
        readable_types(sub)
    for param in getattr(command, "params", ()):
        descriptor = getattr(param, "type_descriptor", None)
        if param.metavar is not None or descriptor is None or not descriptor.is_list:
            continue
        (element,) = typing.get_args(descriptor.annotation) or (str,)
        label = f"<{getattr(element, '__name__', 'str').lower()}>"
        if param.param_type_name == "argument":
            # An argument's metavar would replace its name (`ledgers...`), so only the
            # type shown beside the name changes.
            param.display_type_rich = lambda ctx, label=label: label
        else:
            param.metavar = label
    return command


_SETTINGS: dict[str, Any] = {
    "name": "kaudit",
    "help": "Audit action-taking LLM agents by the damage they leave in real state.",
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}

app = typer.Typer(cls=_LazyGroup, **_SETTINGS)


@app.callback()
def _kaudit() -> None:
    """Makes `app` a group of subcommands; every command is added by `_LazyGroup`."""


def eager_app() -> typer.Typer:
    """The same CLI with every module registered up front (what `app` lazily serves)."""
    full = typer.Typer(**_SETTINGS)
    for name in COMMAND_MODULES:
        register_module(full, name)
    return full


def main() -> None:
    """Console-script entry point: every user error is one line on stderr and exit 2.

    The one place every command's errors end: usage errors (click would print a usage
    box of several lines), kaudit's own errors and bad input (`error_line`) become one
    line and exit 2; Ctrl-C is "interrupted" and exit 130. Anything else is a bug and
    keeps its traceback.
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
        print_error(exc.format_message())
        sys.exit(exc.exit_code)
    except Exception as exc:
        message = error_line(exc)
        if message is None:
            raise
        print_error(message)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
