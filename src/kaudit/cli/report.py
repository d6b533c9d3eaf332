"""`kaudit report`: the per-cell tables of a ledger, or its self-contained HTML report."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit._atomic import write_atomic
from kaudit.cli._anchor import HeadOpt, PubkeyOpt, anchor_json, note_anchor, reader_anchor
from kaudit.cli._common import guarded, print_json, split_csv
from kaudit.cli._tables import print_tables
from kaudit.errors import KauditError
from kaudit.grade import JudgeTable, judge_tables
from kaudit.ledger import Ledger, RunRecord, RunSummary, read_grades, read_runs
from kaudit.report import (
    ANYTIME_MARK,
    FIXED_K_METHOD,
    CampaignReport,
    HtmlOptions,
    build_report,
    html_report,
    judge_text_tables,
    rbm_lines,
    sequential_campaigns,
    stopping_rules,
    terminal_tables,
)
from kaudit.report._referee import (
    RefereeReport,
    disagreement_lines,
    referee_report,
    referee_tables,
)


def exposure_lines(report: CampaignReport) -> list[str]:
    """Faults injected (with the outcome mix of runs that hit each) and boundary attempts."""
    lines = []
    for kind, count in report.exposure.faults.items():
        mix = ", ".join(f"{n} {o}" for o, n in report.exposure.fault_outcomes[kind].items())
        lines.append(f"faults {kind}: {count} injected; runs that hit it: {mix}")
    bounded = [cell for cell in report.cells if cell.boundary_attempts]
    for cell in bounded:
        lines.append(
            f"boundary attempts refused: {cell.boundary_attempts} in {cell.model} / {cell.task}"
        )
    return lines


def _write_html(
    path: Path,
    records: Iterable[RunRecord],
    ledger: Path,
    alpha: float,
    model_order: str | None,
    sequential: Collection[str],
    judges: tuple[JudgeTable, ...] = (),
) -> None:
    """The HTML page shows each run's transcript and diff, so it reads the full records.

    They stream from the ledger into the page one at a time, never all held at once.
    """
    order = split_csv(model_order)
    options = HtmlOptions(
        alpha=alpha,
        model_order=None if order is None else tuple(order),
        title=f"kaudit report: {ledger.name}",
        sequential_campaigns=tuple(sequential),
        judges=judges,
    )
    page = html_report(records, options)
    try:
        write_atomic(path, page)  # a kill or a full disk leaves the previous page intact
    except OSError as exc:
        raise KauditError(f"--html {path}: cannot write: {exc.strerror}") from None


REFEREED_SUITES = ("agentdojo:",)
"""Suites whose runs carry their own checks' judgment (`extra["agentdojo"]`)."""


def _refereed(
    store: Ledger, names: list[str], campaign: str | None, alpha: float
) -> RefereeReport | None:
    """The suite's own checks beside kaudit's, read only for campaigns on a refereed suite."""
    suites = [str((store.manifest(n) or {}).get("suite", {}).get("name", "")) for n in names]
    if not any(s.startswith(REFEREED_SUITES) for s in suites):
        return None
    return referee_report(store.records(campaign), "agentdojo", alpha)


def _print_judges(
    judges: tuple[JudgeTable, ...], runs: Sequence[RunSummary], alpha: float, console: Console
) -> None:
    """LLM judges against the state (`kaudit grade`), when the ledger holds grades."""
    if judges:
        print_tables(judge_text_tables(judges, runs, alpha), console)
    for line in rbm_lines(judges):
        console.print(line, soft_wrap=True, markup=False)


def register(app: typer.Typer) -> None:
    """Add the `report` command."""

    @app.command("report")
    @guarded
    def report(
        ledger: Annotated[Path, typer.Argument(help="Ledger file.", exists=True, dir_okay=False)],
        campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
        alpha: Annotated[float, typer.Option(help="Interval level is 1 - alpha.")] = 0.05,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        html: Annotated[
            Path | None, typer.Option("--html", help="Also write the HTML report to this file.")
        ] = None,
        model_order: Annotated[
            str | None, typer.Option(help="Capability order a,b,c for the HTML gradient.")
        ] = None,
        no_verify: Annotated[
            bool, typer.Option("--no-verify", help="Report a ledger whose hash chain is broken.")
        ] = False,
        head: HeadOpt = None,
        pubkey: PubkeyOpt = None,
    ) -> None:
        """Per (model, task) cell: n, damage x, p̂, exact Clopper-Pearson interval, safe^n.

        Cells of a sequentially stopped campaign (`kaudit run --until`) show the
        anytime-valid interval instead, marked † and named under the table. Also the
        sub-label and severity mix per cell, safe^k / pass^k / miss rates,
        transcript grading against the state, and damage economics. `--html FILE` writes
        one self-contained page with figures and a run viewer. Opens the ledger read-only
        and verifies its hash chain first; a broken chain is refused (exit 2) unless
        --no-verify, which the output then states. With --head (and --pubkey) the chain
        must still hold that anchor, and records after it are not counted.

        Example: kaudit report audit.sqlite --html report.html
        """
        if not 0.0 < alpha < 1.0:
            raise KauditError(f"--alpha must be in (0, 1), got {alpha}")
        anchor = reader_anchor(head, pubkey, no_verify)
        with Ledger(ledger, readonly=True) as store:
            # One pass verifies every row and keeps only what the tables need.
            read = read_runs(store, campaign, verify=not no_verify, anchor=anchor)
            runs = read.runs
            if campaign is not None and campaign not in read.campaigns:
                raise KauditError(
                    f"{ledger}: no campaign {campaign!r}; it holds {', '.join(read.campaigns)}"
                )
            sequential = sequential_campaigns(runs)
            rules = stopping_rules(runs)
            # judge grades: their own chain, verified with the runs (same --no-verify)
            judges = tuple(
                judge_tables(runs, read_grades(ledger, verify=not no_verify).grades, alpha)
            )
            if html is not None:
                records = list(store.records(campaign, upto=read.anchored_records))
                _write_html(html, records, ledger, alpha, model_order, sequential, judges)
            judged = _refereed(
                store, [campaign] if campaign else list(read.campaigns), campaign, alpha
            )
        note_anchor(read.records, read.anchored_records, as_json)
        built = build_report(runs, alpha, sequential)
        if as_json:
            unverified = {"verified": False} if no_verify else {}
            anchored = anchor_json(read.records, read.anchored_records)
            graded = {"judges": [t.to_json() for t in judges]} if judges else {}
            refereed = {"referee": judged.to_json()} if judged is not None else {}
            print_json(
                built.to_json()
                | {"stopping_rules": rules}
                | graded
                | unverified
                | anchored
                | refereed
            )
            return
        console = Console(highlight=False)
        if no_verify:
            console.print("note: --no-verify: the ledger's hash chain was not checked")
        console.print(
            f"{built.runs} runs, {built.invalid} invalid (recorded, never counted)", soft_wrap=True
        )
        print_tables(
            terminal_tables(runs, alpha, sequential_campaigns=sequential, report=built), console
        )
        for name, rule in rules.items():
            if rule:
                console.print(f"campaign {name}: stopping rule {rule}", soft_wrap=True)
        anytime = {c.interval for c in built.cells if c.interval != FIXED_K_METHOD}
        for method in sorted(anytime):
            console.print(
                f"{ANYTIME_MARK} sequentially stopped cell: anytime-valid interval "
                f"({method}), not the fixed-k Clopper-Pearson one",
                soft_wrap=True,
            )
        for line in exposure_lines(built):
            console.print(line, soft_wrap=True)
        if judged is not None:
            print_tables(referee_tables(judged), console)
            for line in disagreement_lines(judged):
                console.print(line, soft_wrap=True, markup=False)
        _print_judges(judges, runs, alpha, console)
        if html is not None:
            console.print(f"HTML report -> {html}", soft_wrap=True)
