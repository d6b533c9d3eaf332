"""One cell identity: task versions and world templates never pool, in any reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import RunRecord
from kaudit.ledger._tally import tallies_from_records
from kaudit.report import economics
from kaudit.report._cells import build_report
from kaudit.stats import CellKey
from kaudit.stats._tally import merge_tallies
from tests.records import labeled_run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriptions"
OLD, NEW = "a" * 64, "b" * 64


def run(
    i: int, *, digest: str = OLD, world: str | None = None, dollars: str | None = None
) -> RunRecord:
    return labeled_run(
        i, damage=dollars is not None, dollars=dollars, task_digest=digest, world_digest=world
    )


def test_economics_clusters_each_task_version_apart() -> None:
    """Fails if economics clusters by task id (today's code: one cluster of 20 runs, no interval).

    The replay: the same task in two versions, damage priced only in one. Two clusters
    give a bootstrap interval; one merged cluster gives none.
    """
    records = [run(i, digest=OLD, dollars="100") for i in range(10)]
    records += [run(i, digest=NEW) for i in range(10, 20)]
    [model] = economics(records, bootstrap=200)
    assert (model.cells, model.runs) == (2, 20)
    assert model.damage_ci[0] < model.damage_ci[1]


def test_runs_of_two_world_templates_are_two_cells_everywhere() -> None:
    """Fails if cells are keyed by the task digest only (one cell of n = 8 for two worlds)."""
    records = [run(i, world="w1" * 32) for i in range(4)]
    records += [run(i, world="w2" * 32, dollars="5") for i in range(4, 8)]
    report = build_report(records)
    assert sorted((c.task, c.n, c.damage) for c in report.cells) == [
        ("t@aaaaaaaa+w1w1w1w1", 4, 0),
        ("t@aaaaaaaa+w2w2w2w2", 4, 4),
    ]
    tallies = tallies_from_records(records)
    assert {t.key for t in tallies} == {
        CellKey("m", "t", OLD, "w1" * 32),
        CellKey("m", "t", OLD, "w2" * 32),
    }
    assert len(merge_tallies(tallies + tallies)) == 2
    assert economics(records, bootstrap=0)[0].cells == 2


def test_a_cell_name_is_derived_from_its_key_and_round_trips() -> None:
    """Fails if a versioned name loses its key (task_id must strip ``@digest8+world8``)."""
    records = [run(0, world="w1" * 32), run(1, world="w2" * 32), run(2, digest=NEW)]
    for tally in tallies_from_records(records):
        assert tally.task_id == "t" and tally.task != "t"
        assert tally.key == CellKey("m", "t", tally.digest, tally.world)


def test_an_edited_seed_row_makes_a_second_campaign_its_own_cell(tmp_path: Path) -> None:
    """The replay: change one seed row of an own world, run a second campaign on the ledger.

    Fails if the record does not carry the world template's digest, so the second
    campaign's runs join the first cell (today's code: one cell per task with n = 4).
    """
    world = tmp_path / "w"
    shutil.copytree(EXAMPLE, world)
    ledger = str(tmp_path / "l.sqlite")
    runner = CliRunner()
    args = ["run", "--suite", f"world:{world}", "--agent", "scripted:oracle", "--k", "2"]
    first = runner.invoke(app, [*args, "--campaign", "one", "--ledger", ledger])
    assert first.exit_code == 0, first.output
    schema = world / "schema.sql"
    schema.write_text(schema.read_text().replace("'Bo Lin'", "'Bo Linn'"))
    second = runner.invoke(app, [*args, "--campaign", "two", "--ledger", ledger])
    assert second.exit_code == 0, second.output
    cells = json.loads(runner.invoke(app, ["report", ledger, "--json"]).output)["cells"]
    assert len(cells) == 4 and {c["n"] for c in cells} == {2}
    assert len({c["world_digest"] for c in cells}) == 2
    assert {c["task_id"] for c in cells} == {
        "subs/cancel-team-plan",
        "subs/refund-duplicate-charge",
    }
