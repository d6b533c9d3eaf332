"""`kaudit mcp serve`: one fresh sandbox's tools over MCP, labeled and recorded at the end."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from kaudit._printable import printable
from kaudit.cli._common import guarded
from kaudit.cli._options import FaultsOpt, IdentityOpt, SubstrateOpt, SuiteOpt
from kaudit.substrate._choice import DEFAULT_SUBSTRATE

if TYPE_CHECKING:
    from kaudit.ledger import RunRecord


class TransportKind(StrEnum):
    """How the MCP client connects."""

    stdio = "stdio"
    http = "http"


def register(app: typer.Typer) -> None:
    """Add the `mcp` command group."""
    group = typer.Typer(help="Serve a sandbox to an external agent over MCP.", no_args_is_help=True)
    app.add_typer(group, name="mcp")

    @group.command("serve")
    @guarded
    def serve(
        task: Annotated[str, typer.Option(help="Task id within the suite.")],
        suite: SuiteOpt = "builtin",
        seed: Annotated[int, typer.Option(help="The run's seed, recorded with it.")] = 0,
        ledger: Annotated[
            Path | None, typer.Option(help="Append the labeled run to this ledger.")
        ] = None,
        campaign: Annotated[str, typer.Option(help="Campaign name inside the ledger.")] = "mcp",
        model: Annotated[
            str | None, typer.Option(help="Model name for the ledger (default mcp:<client>).")
        ] = None,
        transport: Annotated[
            TransportKind, typer.Option(help="stdio, or streamable HTTP.")
        ] = TransportKind.stdio,
        host: Annotated[str, typer.Option(help="HTTP address to bind.")] = "127.0.0.1",
        port: Annotated[
            int, typer.Option(min=0, max=65535, help="HTTP port (0: a free one, printed).")
        ] = 0,
        keep_dumps: Annotated[bool, typer.Option(help="Store the final state image.")] = False,
        faults: FaultsOpt = None,
        identity: IdentityOpt = None,
        substrate: SubstrateOpt = DEFAULT_SUBSTRATE,
        idle_timeout: Annotated[
            float,
            typer.Option(help="End the run (stalled) after this many seconds without a call."),
        ] = 600.0,
    ) -> None:
        """Serve one fresh sandbox of TASK over MCP until the client calls `finish` or leaves.

        The run is then dumped, labeled and, with --ledger, appended as the next run of
        its (campaign, model, task) cell; a run that finds the ledger held by another
        process for longer than 30 s stays in LEDGER.spool/ and is appended by the next
        serve of that ledger (a warning names the file). --faults, --identity and
        --substrate mean what they mean for `kaudit run`. Stdout is the MCP channel with
        stdio; messages go to stderr.

        Example: kaudit mcp serve --task billing/invoice-delete-drafts --ledger mcp.sqlite
        """
        from kaudit import serve_run
        from kaudit.ledger._spool import RunSpooled

        console = Console(stderr=True, highlight=False, soft_wrap=True)

        def recorded(kept: RunRecord) -> None:
            where = f" -> {ledger} run {kept.run_index}" if ledger is not None else ""
            verdict = kept.outcome or f"INVALID ({kept.invalid_reason})"
            console.print(
                printable(f"{kept.model} {kept.task}: {verdict} {kept.sub_label or ''}{where}"),
                markup=False,
            )

        def spooled(waiting: RunSpooled) -> None:  # safe on disk; the next serve appends it
            console.print(f"warning: {waiting}")

        serve_run(
            task,
            suite,
            ledger=ledger,
            seed=seed,
            campaign=campaign,
            model=model,
            transport="http" if transport is TransportKind.http else "stdio",
            host=host,
            port=port,
            keep_dumps=keep_dumps,
            faults=faults,
            identity=identity,
            substrate=substrate,
            idle_timeout=idle_timeout,
            on_url=lambda url: console.print(f"serving {task} at {url}"),
            on_record=recorded,
            on_spooled=spooled,
        )
