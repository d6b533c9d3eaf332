"""`kaudit ledger`: verify, anchor, sign, import into, export from and migrate ledger files."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit.cli._anchor import AnchoredPrefixOpt, HeadOpt, PubkeyOpt, note_anchor, note_spool
from kaudit.cli._common import err_console, guarded, head_line, print_json
from kaudit.cli._open import needs_head, opened
from kaudit.cli._plural import counted
from kaudit.ledger import Ledger, import_files, verify_ledger
from kaudit.ledger._export_ledger import export_ledger
from kaudit.ledger._import import IMPORTED
from kaudit.ledger._reader_anchor import reader_anchor
from kaudit.ledger._sign import generate_keypair, sign_anchor
from kaudit.ledger._spool import drain_ledger
from kaudit.ledger._store import migrate_ledger

LedgerArg = Annotated[Path, typer.Argument(help="Ledger file.", dir_okay=False)]


class ExportFormat(StrEnum):
    """What `ledger export` writes."""

    jsonl = "jsonl"
    csv = "csv"


def register(app: typer.Typer) -> None:
    """Add the `ledger` group."""
    group = typer.Typer(
        help="Verify, anchor, import into and export from ledgers.", no_args_is_help=True
    )
    app.add_typer(group, name="ledger")
    group.command("verify")(guarded(verify))
    group.command("head")(guarded(head))
    group.command("keygen")(guarded(keygen))
    group.command("import")(guarded(import_))
    group.command("export")(guarded(export))
    group.command("migrate")(guarded(migrate))
    group.command("drain")(guarded(drain))


def verify(
    ledger: LedgerArg,
    head: HeadOpt = None,
    pubkey: PubkeyOpt = None,
    anchored_prefix: AnchoredPrefixOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check every record's hash, link and indexed columns, and the anchor if given.

    Judge grades (`kaudit grade`) are checked the same way, in their own chain, which the
    anchor pins too. Exits 2 naming the first bad record or grade, or the anchor's missing
    one when a chain was truncated or rewritten, or the first record (or grade) after
    the anchor, unless --anchored-prefix (then they are checked and reported as left
    out). Opens the file read-only.

    Example: kaudit ledger verify audit.sqlite --head audit.head.json
    """
    needs_head(head, anchored_prefix)
    anchor = reader_anchor(head, None)
    report = verify_ledger(ledger, anchor, pubkey, anchored_prefix=anchored_prefix)
    if as_json:
        print_json(report.to_json())
        return
    checked = " and matches its signed anchor" if report.signed else ""
    checked = checked or (" and matches its anchor" if report.anchored else "")
    grades = f"; {report.grades} grades, grade chain intact" if report.grades else ""
    Console(highlight=False).print(f"{report.records} records, hash chain intact{checked}{grades}")
    note_anchor(report.records, report.anchored_records, grades=report.grade_anchor)
    note_spool(ledger)


def head(
    ledger: LedgerArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    sign_key: Annotated[
        Path | None, typer.Option(help="ed25519 private key (PEM) to sign the head with.")
    ] = None,
) -> None:
    """Print the chain's record count and head hash: the anchor to keep outside the file.

    Keep it where the ledger's writer cannot rewrite it (a git commit, a CI artifact);
    `ledger verify --head` then catches truncation and recomputed chains. The ledger is
    verified first (its form and both chains): a broken one is refused (exit 2), never
    anchored or signed.

    Example: kaudit ledger head audit.sqlite --json > audit.head.json
    """
    with opened(ledger) as snapshot:  # a head is signed only over a verified chain
        anchor = snapshot.head_anchor()
    if sign_key is not None:
        anchor = sign_anchor(anchor, sign_key)
    if as_json:
        print_json(anchor.to_json())
        return
    line = head_line(anchor)
    if anchor.signature is not None:
        line += f", signature {anchor.signature}"
    Console(highlight=False, soft_wrap=True).print(line)


def keygen(
    private_key: Annotated[Path, typer.Argument(help="Private key file to create (PEM).")],
    public_key: Annotated[
        Path | None, typer.Option(help="Public key file; PRIVATE_KEY.pub by default.")
    ] = None,
) -> None:
    """Create an ed25519 key pair for signing ledger heads; never overwrites a file.

    Example: kaudit ledger keygen audit-signing.pem
    """
    public = public_key or private_key.with_name(private_key.name + ".pub")
    generate_keypair(private_key, public)
    Console(highlight=False).print(f"private key {private_key} (mode 0600), public key {public}")


def import_(
    ledger: Annotated[Path, typer.Option(help="Ledger file (created if missing).")],
    model_file: Annotated[
        list[str], typer.Option(help="MODEL=PATH of an AgentRelBench verdicts.jsonl; repeat.")
    ],
    campaign: Annotated[str, typer.Option(help="Campaign name for the imported runs.")] = IMPORTED,
) -> None:
    """Import published AgentRelBench verdicts (one model per file) into a ledger.

    All files go in one transaction: any bad row refuses the whole import, naming its
    file and line. Importing the same files again adds nothing.

    Example: kaudit ledger import --ledger arb.sqlite --model-file qwen3-32b=verdicts.jsonl
    """
    from kaudit.report import verdict_files

    sources = verdict_files(model_file)
    with Ledger(ledger) as store:
        added, present = import_files(store, sources, campaign)
        anchor = store.head()
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"{added} runs imported, {present} already present -> {ledger}")
    console.print(head_line(anchor))


def export(
    ledger: LedgerArg,
    fmt: Annotated[
        ExportFormat, typer.Option("--format", help="jsonl (whole records) or csv.")
    ] = ExportFormat.jsonl,
    campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
    all_attempts: Annotated[
        bool, typer.Option(help="Also superseded attempts of retried runs.")
    ] = False,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Export a ledger whose hash chain is broken.")
    ] = False,
    head: HeadOpt = None,
    pubkey: PubkeyOpt = None,
    anchored_prefix: AnchoredPrefixOpt = False,
) -> None:
    """Write the ledger's records to stdout (each run once, its counted record).

    The chain is verified first (a broken one is refused, exit 2, unless --no-verify); its
    head goes to stderr at the end, so an export can be tied to its ledger. With --head
    (and --pubkey) a ledger holding records after the anchor is refused; with
    --anchored-prefix too, only the anchored records are written.

    Example: kaudit ledger export audit.sqlite --format csv > runs.csv
    """
    with opened(
        ledger, head, pubkey, no_verify=no_verify, anchored_prefix=anchored_prefix
    ) as snapshot:
        done = export_ledger(
            snapshot, fmt.value, stream=sys.stdout, shape="records", campaign=campaign,
            all_attempts=all_attempts,
        )  # fmt: skip
    if done.verified:
        note_anchor(done.records, done.anchored_records)
    note_spool(ledger)
    err_console.print(head_line(done.head), highlight=False, soft_wrap=True)


def migrate(ledger: LedgerArg) -> None:
    """Upgrade a format-1 ledger to the current format in place, keeping every hash.

    Example: kaudit ledger migrate old-audit.sqlite
    """
    upgraded = migrate_ledger(ledger)
    state = "upgraded to the current format" if upgraded else "already in the current format"
    Console(highlight=False).print(f"{ledger}: {state}")


def drain(ledger: LedgerArg) -> None:
    """Append the served runs waiting in LEDGER.spool/ (their ledger was held when they ended).

    `kaudit mcp serve` and `kaudit run` do this whenever they hold the ledger; this is for
    a spool nothing else will drain soon. An entry the ledger refuses (its campaign pins
    other facts, a damaged file) stays in the spool and is named; exit 2 then.

    Example: kaudit ledger drain audit.sqlite
    """
    drained = drain_ledger(ledger)
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"{counted(len(drained.appended), 'served run')} appended -> {ledger}")
    for kept in drained.kept:
        err_console.print(f"error: {kept}", highlight=False, soft_wrap=True, markup=False)
    if drained.kept:
        raise typer.Exit(2)
