"""`kaudit stats`, `plan`, `prereg freeze` and `analyze`: statistics over ledgers."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from kaudit._require import require_probability
from kaudit.cli._anchor import AnchoredPrefixOpt, HeadOpt, PubkeyOpt, note_anchor, note_spool
from kaudit.cli._budget import print_budgets
from kaudit.cli._common import guarded, print_json, split_csv
from kaudit.cli._open import needs_head, opened
from kaudit.cli._tables import print_blocks
from kaudit.errors import KauditError
from kaudit.ledger import Snapshot
from kaudit.report._sources import Compat, LedgerFormat, distinct_sources, pool_sources
from kaudit.stats import analyze, freeze_prereg, load_frozen_prereg, prereg_lock_path
from kaudit.stats._plan import PopulationPlan
from kaudit.stats._prereg import ClaimResult

if TYPE_CHECKING:
    from kaudit._plan import AuditPlan

FormatOpt = Annotated[LedgerFormat, typer.Option("--format", help="Ledger format.")]
ModelFileOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model-file",
        help="An AgentRelBench verdicts.jsonl as MODEL=PATH (repeatable; one model a file).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _k_values(text: str) -> list[int]:
    """`--k 1,2,4` as integers, each at least 1."""
    values = []
    for part in split_csv(text) or []:
        if not part.isdigit() or int(part) < 1:
            raise KauditError(f"--k must be whole numbers >= 1 separated by commas, got {text!r}")
        values.append(int(part))
    return values


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def render_claims(results: Sequence[ClaimResult]) -> Table:
    """Claim outcomes as a rich table."""
    table = Table(title="pre-registered claims")
    for col in ("claim", "pool", "status", "reason"):
        table.add_column(col)
    colour = {"confirmed": "green", "underpowered": "yellow", "demoted": "red"}
    for r in results:
        table.add_row(r.id, r.pool, f"[{colour[r.status]}]{r.status}[/]", r.reason)
    return table


def register(app: typer.Typer) -> None:
    """Add the `stats`, `plan`, `prereg freeze` and `analyze` commands."""
    app.command("stats")(guarded(stats))
    app.command("plan")(guarded(plan))
    prereg_app = typer.Typer(
        help="Pre-register claims before the data are in.", no_args_is_help=True
    )
    prereg_app.command("freeze")(guarded(freeze))
    app.add_typer(prereg_app, name="prereg")
    app.command("analyze")(guarded(analyze_cmd))


def stats(
    ledgers: Annotated[
        list[str] | None, typer.Argument(help="Ledger files.", show_default=False)
    ] = None,
    fmt: FormatOpt = LedgerFormat.kaudit,
    model_file: ModelFileOpt = None,
    alpha: Annotated[float, typer.Option(help="Intervals are at 1 - alpha.")] = 0.05,
    eps: Annotated[float, typer.Option(help="Stochastic: interval in (eps, 1-eps).")] = 0.05,
    k: Annotated[str, typer.Option(help="k values for pass^k, safe^k, pass@k.")] = "1,2,4,8",
    bootstrap: Annotated[int, typer.Option(help="Cluster-bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    wilson: Annotated[
        bool, typer.Option("--wilson", help="Wilson instead of Clopper-Pearson per cell.")
    ] = False,
    model_order: Annotated[
        str | None, typer.Option(help="Model order a,b,c: adds the capability gradient.")
    ] = None,
    compat: Annotated[
        Compat | None,
        typer.Option(
            help="Follow kaudit's or AgentRelBench's conventions (default: agentrelbench "
            "for --format agentrelbench or --model-file, else kaudit)."
        ),
    ] = None,
    as_json: JsonOpt = False,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Use a ledger whose hash chain is broken.")
    ] = False,
    head: HeadOpt = None,
    pubkey: PubkeyOpt = None,
    anchored_prefix: AnchoredPrefixOpt = False,
) -> None:
    """Per-cell intervals, audit miss rate, overdispersion, pass^k and safe^k of a pool.

    Each kaudit ledger's hash chain is verified first; a broken one is refused (exit 2)
    unless --no-verify, which the output then states. --head (and --pubkey) anchor a
    single kaudit ledger, refused if it holds records after the anchor unless
    --anchored-prefix, which reads the anchored records alone.
    Cells of a sequentially stopped campaign (`kaudit run --until`) get the anytime-valid
    interval, marked † in the table and named in the JSON's `interval`.

    Example: kaudit stats --format agentrelbench --model-file llama-3.1-8b=verdicts.jsonl --json
    """
    from kaudit import summarize

    with contextlib.ExitStack() as stack:
        sources = _opened(stack, ledgers or [], fmt, head, pubkey, no_verify, anchored_prefix)
        built = summarize(
            sources, model_files=model_file or [], fmt=fmt, alpha=alpha, eps=eps,
            k=_k_values(k), bootstrap=bootstrap, seed=seed,
            interval="wilson" if wilson else "clopper-pearson",
            model_order=split_csv(model_order), compat=compat, verify=not no_verify,
            head=head, pubkey=pubkey,
        )  # fmt: skip
    note_anchor(built.records, built.anchored_records, as_json, built.grade_anchor)
    if fmt == LedgerFormat.kaudit:
        for path in ledgers or []:
            note_spool(Path(path))
    if as_json:
        print_json(built.to_json(view="stats"))
        return
    print_blocks(built.blocks(view="stats"), Console(highlight=False, soft_wrap=True))


def _opened(
    stack: contextlib.ExitStack[bool | None],
    ledgers: list[str],
    fmt: LedgerFormat,
    head: str | None,
    pubkey: Path | None,
    no_verify: bool,
    anchored_prefix: bool,
) -> list[str | Snapshot]:
    """Each kaudit ledger opened once (`kaudit.open`), as `stats` hands it to `summarize`.

    Left as given when `summarize` refuses the arguments whatever the files hold
    (verdict files of another format; an anchor for several ledgers), so its error
    is the one printed.
    """
    needs_head(head, anchored_prefix)
    if fmt != LedgerFormat.kaudit or (head is not None and len(ledgers) != 1):
        return list(ledgers)
    return [
        stack.enter_context(
            opened(p, head, pubkey, no_verify=no_verify, anchored_prefix=anchored_prefix)
        )
        for p in ledgers
    ]


def plan(
    p: Annotated[float | None, typer.Option("--p", help="Damage probability per run.")] = None,
    detect: Annotated[
        float, typer.Option(help="Wanted chance to see damage at least once.")
    ] = 0.95,
    ledger: Annotated[
        list[str] | None, typer.Option("--ledger", help="Plan each damaging cell of it.")
    ] = None,
    fmt: FormatOpt = LedgerFormat.kaudit,
    model_file: ModelFileOpt = None,
    ci_alpha: Annotated[
        float, typer.Option(help="Cells use the 1 - ci_alpha exact lower bound.")
    ] = 0.05,
    as_json: JsonOpt = False,
    from_ledger: Annotated[
        Path | None,
        typer.Option(help="With --p: money and time from this ledger's measured runs."),
    ] = None,
    tasks: Annotated[
        int | None, typer.Option(help="Tasks to audit (default: the ledger's).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Runs in flight at once.")] = 1,
    head: HeadOpt = None,
    pubkey: PubkeyOpt = None,
    anchored_prefix: AnchoredPrefixOpt = False,
) -> None:
    """Audit runs needed to see damage at least once with probability DETECT.

    With --ledger / --model-file, each damaging cell's runs and each model's population
    plan. With --from-ledger L, also what those runs cost in model dollars, tokens and
    time, from L's measured means per run. Each kaudit ledger is verified first; --head
    (and --pubkey) anchor the one read, --from-ledger or a single --ledger, and
    --anchored-prefix reads the records the anchor pins alone.

    Example: kaudit plan --p 0.1 --detect 0.95 --from-ledger audit.sqlite --concurrency 8
    """
    from kaudit import plan as plan_audit

    require_probability("detect", detect)  # before a ledger is read
    if from_ledger is not None and p is None:
        raise KauditError("--from-ledger needs --p: the damage probability to plan for")
    if p is not None:
        require_probability("p", p, one=True)
    if p is not None and (ledger or model_file):
        raise KauditError(
            "--ledger and --model-file are planned cell by cell without --p; "
            "with --p, give --from-ledger for budgets"
        )
    needs_head(head, anchored_prefix)
    with contextlib.ExitStack() as stack:
        sources = _plan_sources(
            stack, p, ledger or [], fmt, from_ledger, head, pubkey, anchored_prefix
        )
        made = plan_audit(
            p,
            detect=detect,
            ledgers=sources if from_ledger is None else [],
            model_files=model_file or [],
            fmt=fmt.value,
            ci_alpha=ci_alpha,
            from_ledger=sources[0] if from_ledger is not None else None,
            tasks=tasks,
            concurrency=concurrency,
        )
        for source in sources if made.mode == "cells" else []:
            if isinstance(source, Snapshot):
                note_anchor(source.records, source.anchored_records, as_json)
                note_spool(source.path)
    if as_json:
        print_json(made.to_json())
    elif made.mode == "budgets":
        print_budgets(made)
    elif made.mode == "probability":
        Console().print(
            f"{made.runs} runs see damage of probability {p} with probability ≥ {detect}"
        )
    else:
        _print_cells(made)


def _plan_sources(
    stack: contextlib.ExitStack[bool | None],
    p: float | None,
    ledgers: list[str],
    fmt: LedgerFormat,
    from_ledger: Path | None,
    head: str | None,
    pubkey: Path | None,
    anchored_prefix: bool,
) -> list[str | Snapshot]:
    """The ledgers `plan` reads, each kaudit one opened once (`kaudit.open`).

    `--from-ledger` alone with --p; otherwise, without --p, the --ledger arguments.
    --head anchors exactly one of them: a second ledger, verdict files or no ledger at
    all leave nothing it could pin.
    """
    if from_ledger is not None:
        return [
            stack.enter_context(opened(from_ledger, head, pubkey, anchored_prefix=anchored_prefix))
        ]
    if p is not None:
        if head is not None or pubkey is not None:
            raise KauditError("--head anchors a ledger; with --p alone none is read")
        return []
    if (head is not None or pubkey is not None) and (
        fmt != LedgerFormat.kaudit or len(ledgers) != 1
    ):
        raise KauditError(
            "--head anchors one kaudit ledger: give --from-ledger, or exactly one --ledger"
        )
    if fmt != LedgerFormat.kaudit:
        return list(ledgers)
    distinct_sources(ledgers)  # named by the path given, before either file is opened
    return [
        stack.enter_context(opened(path, head, pubkey, anchored_prefix=anchored_prefix))
        for path in ledgers
    ]


def _print_cells(made: AuditPlan) -> None:
    """Each damaging cell's runs, and what the population's miss rate calls for.

    The table shows the chance that all cells see their damage; a line per model the runs
    per cell that its conservative (upper) population miss rate calls for.
    """
    table = Table(
        title=f"runs to see damage with probability ≥ {made.detect} per cell (conservative); "
        f"all {len(made.cells)} cells at once: ≥ {made.detect ** len(made.cells):.2f}"
    )
    for col in ("model", "task", "damage", "n", "p lower", "runs"):
        table.add_column(col, justify="left" if col in ("model", "task") else "right")
    for c in made.cells:
        table.add_row(c.model, c.task, str(c.damage), str(c.n), _num(c.p_low, 4), str(c.runs))
    console = Console()
    console.print(table)
    for line in _population_lines(made.population, made.detect):
        console.print(line, highlight=False, soft_wrap=True)


def _population_lines(plans: Sequence[PopulationPlan], detect: float) -> list[str]:
    """Per model: the conservative population miss rates and the runs they call for."""
    lines = []
    for p in plans:
        if p.fit.interval is None:
            lines.append(f"{p.model}: population miss rate not identified (no damage seen)")
            continue
        misses = ", ".join(f"{_num(value, 3)} at k = {k}" for k, value in p.misses)
        runs = f"{p.runs} runs per cell" if p.runs is not None else "no number up to 100,000"
        lines.append(
            f"{p.model}: a damage-producing cell is missed with probability at most {misses} "
            f"(population upper bounds); seeing one with probability ≥ {detect}: {runs}"
        )
    return lines


def freeze(
    file: Annotated[Path, typer.Argument(help="Prereg YAML file.", exists=True, dir_okay=False)],
    force: Annotated[
        bool, typer.Option(help="Overwrite a lock that records a different file.")
    ] = False,
) -> None:
    """Validate a pre-registration file and record its sha256 in FILE.lock.

    Example: kaudit prereg freeze prereg.yaml
    """
    record = freeze_prereg(file, force)
    Console().print(f"frozen {file} sha256 {record['sha256']} → {prereg_lock_path(file)}")


def analyze_cmd(
    ledgers: Annotated[
        list[str] | None, typer.Argument(help="Ledger files as [POOL=]PATH.", show_default=False)
    ] = None,
    prereg: Annotated[
        Path, typer.Option("--prereg", help="Frozen prereg YAML.", exists=True, dir_okay=False)
    ] = Path("prereg.yaml"),
    fmt: FormatOpt = LedgerFormat.kaudit,
    model_file: ModelFileOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge each pre-registered claim: confirmed, underpowered or demoted, with the reason.

    Refuses a prereg file changed since `kaudit prereg freeze`. A source prefixed POOL=
    (POOL: for --model-file) feeds only that pool; unprefixed ones feed every pool.

    Example: kaudit analyze --prereg prereg.yaml dev=audit.sqlite confirm=rerun.sqlite
    """
    spec, digest = load_frozen_prereg(prereg)
    pools, stopped = pool_sources(ledgers or [], model_file or [], fmt, list(spec.pools))
    results = analyze(spec, pools, stopped)
    if as_json:
        print_json({"prereg": str(prereg), "sha256": digest, "claims": [vars(r) for r in results]})
        return
    Console().print(render_claims(results))
