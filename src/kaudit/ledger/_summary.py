"""What the report, the statistics and the gate read of a run, and the one pass reading it.

A 10,000-run ledger holds about 50 MB of records, mostly transcripts, tool calls and
verdict deltas. Reports, statistics and the gate read a few dozen facts of each run;
keeping every full `RunRecord` alive at once costs hundreds of MB and most of the time
(the garbage collector walking millions of nested dicts). `read_runs` walks the chain
once: it checks each row as `kaudit ledger verify` does (the same walk, `chain_rows`),
validates it as a `RunRecord`, keeps its `RunSummary` and lets the record go.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from kaudit.ledger._anchor import GENESIS, Anchor
from kaudit.ledger._record import RunRecord
from kaudit.ledger._store import Ledger
from kaudit.spec import Severity
from kaudit.spec._script import Outcome, SubLabel

__all__ = ["LedgerRuns", "RunSummary", "read_runs", "run_summaries", "run_summary"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The facts of one run that counting, the report's tables and its graders use.

    Every field is taken from the validated `RunRecord` by `run_summary`, the only place
    that builds one, so a report from summaries and one from full records agree.

    Attributes:
        campaign: Campaign name.
        model: Model under audit.
        task: Task id.
        run_index: 0-based index of the run within its cell.
        attempt: The record's attempt (the newest one counts).
        task_digest: sha256 of the parsed task; cells of different digests never pool.
        world_digest: Digest of the world template; cells of different worlds never pool.
        status: ``labeled`` or ``invalid`` (never counted).
        outcome: PASS, FAIL_SAFE or FAIL_DAMAGE.
        sub_label: How the run ended.
        severity: Worst severity among damage deltas.
        counts_as_damage: Headline damage indicator.
        counts_as_damage_upper: Damage or errored-clean.
        success: All success checks passed.
        dollars: Priced damage as an exact decimal string.
        cost_usd: Model cost of the run.
        simulated: The agent was a simulated double (``extra["simulated"]``).
        fault_kinds: Kind of each fault injected, in call order.
        boundary_attempt_count: Calls the permission boundary refused.
        identity: Role the run acted as, when bounded (the gate's boundary probes).
        final_message: The agent's last message.
        agent_text: Each turn's content and the final message, one per line.
        has_words: Whether the record kept anything the agent wrote.
        refusal_declared: The verdict's recorded ``refusal_declared`` (None if absent).
        api_error: The serving-stack failure that ended the run after every retry
            (``http_500``, ``timeout``, …; ``extra["api_error"]``), None otherwise.
        tool_call_count: Tool calls the agent made (refused and failed ones included).
        stopping_rule: The text of the stopping rule the run was admitted under.
        sequential: The rule was sequential: the cell's interval is the anytime-valid one.
        suite_tasks_digest: The chained digest of the suite's task ids (None before it was
            recorded), which the manifest's `suite_tasks` must match.
    """

    campaign: str
    model: str
    task: str
    run_index: int
    attempt: int
    task_digest: str | None
    world_digest: str | None
    status: Literal["labeled", "invalid"]
    outcome: Outcome | None
    sub_label: SubLabel | None
    severity: Severity | None
    counts_as_damage: bool
    counts_as_damage_upper: bool
    success: bool
    dollars: str | None
    cost_usd: float
    simulated: bool
    fault_kinds: tuple[str, ...]
    boundary_attempt_count: int
    identity: str | None
    final_message: str | None
    agent_text: str
    has_words: bool
    refusal_declared: bool | None
    api_error: str | None
    tool_call_count: int
    stopping_rule: str | None = None
    sequential: bool = False
    suite_tasks_digest: str | None = None

    @property
    def damage_dollars(self) -> Decimal:
        """Priced damage as a Decimal (0 when unpriced)."""
        return Decimal(self.dollars) if self.dollars is not None else Decimal(0)


def run_summary(record: RunRecord | RunSummary) -> RunSummary:
    """The summary of a record (a summary is returned as it is)."""
    if isinstance(record, RunSummary):
        return record
    contents = [turn.get("content") for turn in record.transcript]
    final = record.final_message
    declared = (record.verdict or {}).get("refusal_declared")
    return RunSummary(
        campaign=record.campaign,
        model=record.model,
        task=record.task,
        run_index=record.run_index,
        attempt=record.attempt,
        task_digest=record.task_digest,
        world_digest=record.world_digest,
        status=record.status,
        outcome=record.outcome,
        sub_label=record.sub_label,
        severity=record.severity,
        counts_as_damage=record.counts_as_damage,
        counts_as_damage_upper=record.counts_as_damage_upper,
        success=record.success,
        dollars=record.dollars,
        cost_usd=record.cost_usd,
        simulated=bool(record.extra.get("simulated", False)),
        fault_kinds=tuple(fault.kind for fault in record.faults),
        boundary_attempt_count=len(record.boundary_attempts),
        identity=record.identity,
        final_message=final,
        agent_text="\n".join([*(str(text or "") for text in contents), final or ""]),
        has_words=bool(final) or any(contents),
        refusal_declared=None if declared is None else bool(declared),
        api_error=_api_error(record),
        tool_call_count=len(record.tool_calls),
        stopping_rule=_rule_text(record.stopping_rule),
        sequential=record.sequential,
        suite_tasks_digest=record.suite_tasks_digest,
    )


def _api_error(record: RunRecord) -> str | None:
    """The stack failure of an errored run; records older than the field name none."""
    kind = record.extra.get("api_error")
    return str(kind) if kind is not None and record.termination == "errored" else None


def _rule_text(rule: dict[str, object] | None) -> str | None:
    text = (rule or {}).get("text")
    return text if isinstance(text, str) else None


def run_summaries(records: Iterable[RunRecord | RunSummary]) -> list[RunSummary]:
    """Summaries of `records`, in their order."""
    return [run_summary(record) for record in records]


@dataclass(frozen=True)
class LedgerRuns:
    """The runs that count in a ledger (each run once, at its newest attempt), in append order.

    Attributes:
        runs: One summary per run of the chosen campaign (all campaigns when None).
        records: Rows in the whole chain, superseded attempts included.
        head: Hash of the last row (GENESIS when empty).
        verified: Whether every row's hash, link and indexed columns were checked.
        campaigns: Campaign names of the counted rows, in chain order of first record.
        anchored_records: With an anchor, how many records it pins; `runs` holds only
            runs of those (records after them are refused, or left out in the anchored
            prefix).
    """

    runs: tuple[RunSummary, ...]
    records: int
    head: str
    verified: bool
    campaigns: tuple[str, ...] = ()
    anchored_records: int | None = None
    hashes: tuple[bytes, ...] = field(default=(), repr=False)
    """Each row's hash as read (record N's at N - 1), to check a later read of a row."""


def read_runs(
    ledger: Ledger,
    campaign: str | None = None,
    *,
    verify: bool = True,
    anchor: Anchor | None = None,
    anchored_prefix: bool = False,
) -> LedgerRuns:
    """One pass over the chain: verify every row, keep each run's counted record.

    With `verify` every row is checked exactly as `kaudit ledger verify` checks it (hash,
    link, indexed columns, retries, and `anchor` when given) before any number is taken
    from it; the first bad record raises LedgerError naming it. Every row, superseded
    attempts included, must validate as a `RunRecord`, verified or not. A run's counted
    record is its verdict, else its last INVALID attempt, as `Ledger.records` chooses:
    a verdict is never replaced by a later record, even unverified. With `anchor`, a row
    after the anchored record raises `PastAnchorError`; with `anchored_prefix` too, such
    rows are checked but left out.
    """
    from kaudit.ledger._verify import chain_rows

    chosen: dict[tuple[str, str, str, int], tuple[int, RunSummary]] = {}
    names: dict[str, None] = {}
    count, head, pinned = 0, GENESIS, 0
    hashes: list[bytes] = []
    for row in chain_rows(ledger, verify=verify, anchor=anchor, anchored_prefix=anchored_prefix):
        count, head = count + 1, row.record_hash
        hashes.append(row.record_hash.encode())
        if not row.anchored:
            continue
        pinned += 1
        names.setdefault(row.key[0])
        if campaign is not None and row.key[0] != campaign:
            continue
        kept = chosen.get(row.key)
        if kept is None or kept[1].status != "labeled":
            chosen[row.key] = (row.seq, run_summary(row.record))
    runs = tuple(summary for _, summary in sorted(chosen.values(), key=lambda kept: kept[0]))
    return LedgerRuns(
        runs=runs,
        records=count,
        head=head,
        verified=verify,
        campaigns=tuple(names),
        anchored_records=pinned if anchor is not None else None,
        hashes=tuple(hashes),
    )
