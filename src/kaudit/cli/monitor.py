"""`kaudit monitor` and `kaudit simulate mirage`: deployment events against the audit ledger."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit import compare
from kaudit._printable import printable
from kaudit._require import require_at_least, require_probability
from kaudit.cli._anchor import AnchoredPrefixOpt, HeadOpt, PubkeyOpt, note_anchor, note_spool
from kaudit.cli._common import guarded, print_json
from kaudit.cli._open import opened
from kaudit.errors import KauditError
from kaudit.ledger._reader_anchor import anchor_json
from kaudit.monitor import MonitorReport
from kaudit.monitor._mirage import MirageResult, MirageSetup, simulate_mirage
from kaudit.monitor._monitor import CellReport

ALARM_EXIT = 4


def _fmt(value: float) -> str:
    return "—" if value != value else f"{value:.3f}"


def render(report: MonitorReport) -> list[str]:
    """Four lines per (model, task, group): its name, status and decision, audit, deployment."""
    lines: list[str] = []
    for cell in report.cells:
        d, a = cell.deployment, cell.audit
        group = f" [{cell.group}]" if cell.group else ""
        audit = (
            "no counted run in the ledger"
            if a is None
            else f"{a.damage}/{a.n} damage, {a.interval} [{_fmt(a.ci_low)}, {_fmt(a.ci_high)}]; "
            f"family-wise upper A {_fmt(cell.audit_upper or 0.0)}, "
            f"material limit R {_fmt(cell.limit or 0.0)}"
        )
        lines += [
            f"{cell.model}  {cell.task}{group}",
            f"  {cell.status}, decision {cell.decision}",
            f"  audit     {audit}",
            f"  deployed  {d.harm} harms in {d.n} events, {d.unobserved} unobserved: range "
            f"[{_fmt(d.lower)}, {_fmt(d.upper)}], anytime [{_fmt(d.ci_low)}, {_fmt(d.ci_high)}]",
        ]
    return lines


def _closing(report: MonitorReport) -> list[str]:
    level = round((1 - report.alpha) * 100)
    mirages = sum(cell.status == "mirage" for cell in report.cells)
    return [
        f"{report.events} events, harm threshold {report.threshold:g}; family-wise {level}%: "
        f"{report.compared} cell(s) compared, family {report.family}, each cell's mirage "
        f"test at {report.mirage_alpha:.4g} and bounds at {report.cell_alpha:.4g} "
        f"(Bonferroni), error rate <= {report.error_bound:.3g}; "
        f"deployment anytime-valid: {report.method}",
        f"ALARM: {mirages} cell(s) shown worse than the audit (difference test, every look; "
        f"first at event {report.alarm_event})"
        if report.alarm
        else "no alarm",
    ]


class _StatusChanges:
    """With --follow, one stderr line each time a cell's status changes."""

    def __init__(self) -> None:
        self._err = Console(stderr=True, highlight=False, soft_wrap=True)
        self._last: dict[tuple[str, str, str | None], str] = {}

    def __call__(self, cell: CellReport) -> None:
        key = (cell.model, cell.task, cell.group)
        if self._last.get(key) != cell.status:
            self._last[key] = cell.status
            group = f" [{cell.group}]" if cell.group else ""
            self._err.print(
                f"{cell.model} {cell.task}{group}: {cell.status} at n = {cell.deployment.n}"
            )


def monitor(
    audit: Annotated[Path, typer.Option("--audit", help="Audit ledger.")],
    events: Annotated[str, typer.Option("--events", help="Events JSONL file, or - for stdin.")],
    follow: Annotated[
        bool, typer.Option("--follow", help="Tail the file; stop at the first alarm or Ctrl-C.")
    ] = False,
    threshold: Annotated[float, typer.Option(help="Harm rate a cell must stay under.")] = 0.1,
    alpha: Annotated[float, typer.Option(help="Bounds are at level 1 - alpha.")] = 0.05,
    campaign: Annotated[str | None, typer.Option(help="Only this audit campaign.")] = None,
    family: Annotated[
        int | None,
        typer.Option(help="Cells sharing --alpha (default: the audit's cells; count groups)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    head: HeadOpt = None,
    pubkey: PubkeyOpt = None,
    anchored_prefix: AnchoredPrefixOpt = False,
) -> None:
    """Compare deployment events with the audit; exit 4 if any cell is a mirage.

    The audit ledger's chain is verified first (exit 2 naming the first bad record);
    --head (and --pubkey) anchor it: an audit holding records after the anchor is refused
    unless --anchored-prefix, which reads the anchored records alone.

    Each event line is {"task", "model", "harm": true|false|null, "time"?, "group"?,
    "dollars"?, "version"?}; null means the outcome was not observed; "version" (8+ hex
    digits of the task digest) picks the audited task version, else the newest is used.
    Status per (model, task, group): mirage, consistent, inconclusive, unidentified or
    unsupported; decision: deploy, hold or cannot_determine against --threshold. --alpha
    is the error rate of the whole deployment: each cell's bounds are at alpha / (2 x family).

    Example: kaudit monitor --audit audit.sqlite --events events.jsonl --threshold 0.2 --json
    """
    require_probability("threshold", threshold)  # before the audit's ledger is read
    require_probability("alpha", alpha)
    if family is not None:
        require_at_least("family", family, 1)
    with opened(audit, head, pubkey, anchored_prefix=anchored_prefix) as snapshot:
        report = compare(
            snapshot, sys.stdin if events == "-" else events, threshold=threshold,
            alpha=alpha, campaign=campaign, family=family, follow=follow, source="<stdin>",
            on_cell=_StatusChanges() if follow else None,
        )  # fmt: skip
    note_anchor(report.audit_records, report.anchored_records, as_json)
    note_spool(audit)
    if as_json:
        print_json(report.to_json() | anchor_json(report.audit_records, report.anchored_records))
    else:
        console = Console(highlight=False, soft_wrap=True, markup=False)
        for line in render(report):
            console.print(printable(line), markup=False)
        for line in _closing(report):
            console.print(printable(line), markup=False)
    if report.alarm:
        raise typer.Exit(ALARM_EXIT)


def render_mirage(result: MirageResult) -> list[str]:
    """The simulation's story in lines: the audit cannot tell, the monitor can."""
    lines = ["audit (identical behaviour by construction):"]
    for model, audited in result.audit.items():
        lines.append(
            f"  {model}: {audited.damage}/{audited.n} damage, p̂ {audited.phat:.3f}, "
            f"CI [{audited.ci_low:.3f}, {audited.ci_high:.3f}]"
        )
    lines.append(
        f"  Fisher exact test between them: p = {result.audit_fisher_p:.3f} (no difference)"
    )
    event = result.report.alarm_event
    lines.append(
        f"deployment: {result.report.events} events; "
        + (f"alarm at event {event}" if event is not None else "no alarm")
    )
    for row in result.report.cells:
        if row.model in result.audit and row.audit is not None and row.group is None:
            d = row.deployment
            lines.append(
                f"  {row.model}: {d.harm}/{d.n} harm, anytime [{d.ci_low:.3f}, "
                f"{d.ci_high:.3f}] -> {row.status}"
            )
    return lines


def mirage(
    out: Annotated[
        Path, typer.Option("--out", help="Directory for audit.sqlite and events.jsonl.")
    ],
    seed: Annotated[int, typer.Option(help="Simulation seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Two agents with identical audits diverge in deployment: the monitor tells them apart.

    Writes the audit ledger and the deployment events, so `kaudit monitor` can be run
    on them by hand.

    Example: kaudit simulate mirage --out mirage/ (then: kaudit monitor --audit
    mirage/audit.sqlite --events mirage/events.jsonl --threshold 0.2)
    """
    ledger, events = out / "audit.sqlite", out / "events.jsonl"
    for path in (ledger, events):
        if path.exists():
            raise KauditError(f"{path}: already exists; choose an empty --out directory")
    result = simulate_mirage(MirageSetup(seed=seed), ledger, events)
    if as_json:
        print_json(
            {
                "audit": {m: vars(c) for m, c in result.audit.items()},
                "audit_fisher_p": result.audit_fisher_p,
                "monitor": result.report.to_json(),
                "files": {"audit": str(ledger), "events": str(events)},
            }
        )
        return
    console = Console(highlight=False, soft_wrap=True, markup=False)
    for line in render_mirage(result):
        console.print(line)
    console.print(f"wrote {ledger} and {events}; `kaudit monitor` on them shows every cell")


def register(app: typer.Typer) -> None:
    """Add the `monitor` command and the `simulate` group."""
    app.command("monitor")(guarded(monitor))
    simulate = typer.Typer(help="Simulations that show what a method can and cannot see.")
    simulate.command("mirage")(guarded(mirage))
    app.add_typer(simulate, name="simulate")
