"""Options `kaudit run` and `kaudit mcp serve` share, declared once so they read alike."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

FAULTS_HELP = (
    "Commit-boundary faults for every task: NAME[:RATE][,NAME...], names "
    "ack_lost_after_commit, fail_before_commit, timeout_after_commit, "
    "duplicate_delivery; RATE defaults to 1."
)
IDENTITY_HELP = "YAML identity (role, user, scope, tables) for tasks without one."
SUBSTRATE_HELP = "Where runs execute: 'sqlite' or a postgresql:// URL (?reset=rollback: pooled)."

SuiteOpt = Annotated[str, typer.Option(help="'builtin', a directory, or PREFIX:PATH.")]
FaultsOpt = Annotated[str | None, typer.Option(help=FAULTS_HELP)]
IdentityOpt = Annotated[Path | None, typer.Option(help=IDENTITY_HELP)]
SubstrateOpt = Annotated[str, typer.Option(help=SUBSTRATE_HELP)]
