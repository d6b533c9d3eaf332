"""`kaudit world`: a world's seeded state as files your own code can load."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit.cli._common import guarded
from kaudit.worlds._export import export_named_world


def register(app: typer.Typer) -> None:
    """Add the `world` group."""
    group = typer.Typer(help="Worlds as files.", no_args_is_help=True)
    app.add_typer(group, name="world")
    group.command("export")(guarded(export))


def export(
    directory: Annotated[Path, typer.Argument(help="Where to write the SQL files.")],
    world: Annotated[
        str, typer.Option(help="A world's name (enterprise, a plugin's) or a world directory.")
    ] = "enterprise",
) -> None:
    """Write a world's schema and seed rows as SQL that sqlite3 and psql load.

    DIRECTORY/schema.sql and seed.sql are for sqlite3, DIRECTORY/postgresql/ holds the
    same for psql; tables come in dependency order, so foreign keys hold as they load.

    Example: kaudit world export world/ --world enterprise
    """
    done = export_named_world(world, directory)
    console = Console(stderr=True, highlight=False)
    console.print(
        f"{world}: {len(done.tables)} tables, {done.rows} rows -> "
        + ", ".join(str(path) for path in done.files)
    )
