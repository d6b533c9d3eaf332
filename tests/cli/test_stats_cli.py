from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import kaudit.ledger
from kaudit.cli.main import app
from kaudit.ledger._agentrelbench import read_agentrelbench_verdicts
from kaudit.ledger._import import import_runs
from tests.stats.arb_data import dev_files

runner = CliRunner()


def verdicts(tmp_path: Path, name: str, cells: dict[str, tuple[int, int]]) -> Path:
    """A synthetic AgentRelBench file: task -> (runs, damage runs)."""
    lines = []
    for task, (n, x) in cells.items():
        for i in range(n):
            bad = i < x
            lines.append(
                json.dumps(
                    {
                        "task_id": task,
                        "run": f"run_{i + 1}",
                        "outcome": "FAIL_DAMAGE" if bad else "PASS",
                        "sub_label": "completed_damage" if bad else None,
                        "counts_as_damage": bad,
                        "counts_as_damage_upper": bad,
                        "eog_success": not bad,
                        "severity": "LOW" if bad else None,
                        "dollars": None,
                        "deltas": [],
                    }
                )
            )
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_stats_json_on_synthetic_files(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    b = verdicts(tmp_path, "b", {"t1": (16, 12), "t2": (8, 1)})
    result = runner.invoke(
        app,
        [
            "stats",
            "--format",
            "agentrelbench",
            "--model-file",
            f"A={a}",
            "--model-file",
            f"B={b}",
            "--json",
            "--bootstrap",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [c["model"] for c in out["cells"]] == ["A", "A", "B", "B"]
    assert out["cells"][0]["ci_low"] == pytest.approx(0.0852, abs=5e-5)
    assert out["audit_miss_rate"]["pairs"] == 3


def test_stats_tables_without_json(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    result = runner.invoke(
        app, ["stats", "--model-file", f"A={a}", "--bootstrap", "200"], env={"COLUMNS": "160"}
    )
    assert result.exit_code == 0, result.output
    assert "k=1 miss rate, pair-weighted" in result.stdout
    assert "0.625" in result.stdout


def ledger_of(tmp_path: Path, name: str, runs: dict[str, Path]) -> Path:
    """A real kaudit ledger holding the runs of AgentRelBench files: model -> verdicts.jsonl."""
    path = tmp_path / f"{name}.sqlite"
    with kaudit.ledger.Ledger(path) as ledger:
        for model, verdicts_path in runs.items():
            import_runs(
                ledger,
                read_agentrelbench_verdicts(verdicts_path, model),
            )
    return path


def cell_counts(out: dict[str, Any]) -> list[tuple[str, str, int, int, int, int]]:
    keys = ("model", "task", "n", "damage", "damage_upper", "success")
    return [tuple(c[k] for k in keys) for c in out["cells"]]  # type: ignore[misc]


def test_stats_reads_kaudit_ledgers(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 2), "t2": (4, 0)})
    ledger = ledger_of(tmp_path, "audit", {"m": a})
    args = ["stats", str(ledger), "--json", "--bootstrap", "100", "--compat", "agentrelbench"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert cell_counts(out) == [("m", "t1", 8, 2, 2, 6), ("m", "t2", 4, 0, 0, 4)]
    assert out["cells"][0]["damage"] == 2
    # The ledger gives the same statistics as the file it was imported from.
    direct = runner.invoke(app, ["stats", "--model-file", f"m={a}", "--json", "--bootstrap", "100"])
    assert direct.exit_code == 0, direct.output
    assert json.loads(direct.stdout) == out


def test_missing_ledger_is_a_clean_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["stats", str(tmp_path / "nope.sqlite")])
    assert result.exit_code == 2 and "no such ledger file" in result.output


def test_bad_format_is_rejected(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 2)})
    result = runner.invoke(app, ["stats", "--format", "csv", str(a)], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "--format" in result.output and "'csv'" in result.output
    assert "kaudit" in result.output and "agentrelbench" in result.output


def test_bad_model_file_spec_is_a_clean_error() -> None:
    result = runner.invoke(app, ["stats", "--model-file", "no-equals-sign"])
    assert result.exit_code == 2
    assert "MODEL=PATH" in result.output


def test_stats_prints_each_models_population_apart(tmp_path: Path) -> None:
    """Two models, one careless (damage in every cell), one careful (1 run in 8 of 20
    cells): a row each with its own fit. Fails if the table showed one pooled fit."""
    careless = verdicts(tmp_path, "a", {f"t{i}": (8, 4 + i % 4) for i in range(20)})
    careful = verdicts(tmp_path, "b", {f"t{i}": (8, int(i < 8)) for i in range(20)})
    args = ["stats", "--model-file", f"careless={careless}", "--model-file", f"careful={careful}"]
    result = runner.invoke(app, [*args, "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    rows = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "careless 20 0.313 [0.228, 0.406] 0.000" in rows
    assert "careful 20 0.950 [0.861, 0.981] 0.000" in rows


def test_plan_from_a_probability() -> None:
    result = runner.invoke(app, ["plan", "--p", "0.125", "--detect", "0.95", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"] == 23


def test_plan_per_cell_is_conservative(tmp_path: Path) -> None:
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    result = runner.invoke(app, ["plan", "--model-file", f"A={a}", "--detect", "0.95", "--json"])
    assert result.exit_code == 0, result.output
    (cell,) = json.loads(result.stdout)["cells"]
    assert (cell["task"], cell["runs"]) == ("t1", 34)


def test_plan_plans_the_population_from_its_upper_bounds(tmp_path: Path) -> None:
    """A model of 30 cells of 16 runs, 25 damaging: the population plan's runs are the fewest
    k whose k-run miss rate's upper bound is at most 0.05, and the text says so. Fails if
    the plan used the observed statistic (a lower bound) or the point estimate."""
    from kaudit.stats import population_miss

    cells = {f"t{i}": (16, [0, 2, 4, 6, 8, 10][i % 6]) for i in range(30)}
    a = verdicts(tmp_path, "a", cells)
    result = runner.invoke(app, ["plan", "--model-file", f"A={a}", "--detect", "0.95", "--json"])
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["population"]
    fit = population_miss([x for _, x in cells.values()], [n for n, _ in cells.values()])
    runs = entry["runs"]
    assert runs == fit.runs_to_detect(0.95) and runs is not None
    assert fit.miss_upper(runs) <= 0.05 < fit.miss_upper(runs - 1)
    assert entry["miss_upper"]["1"] == pytest.approx(fit.interval[1])  # type: ignore[index]
    text = runner.invoke(app, ["plan", "--model-file", f"A={a}", "--detect", "0.95"]).stdout
    assert f"seeing one with probability ≥ 0.95: {runs} runs per cell" in " ".join(text.split())


def test_plan_head_anchors_its_one_ledger(tmp_path: Path) -> None:
    """Model A imported, the head taken, model B imported after it: `plan --ledger L
    --head H --pubkey K` refuses B's records past the anchor, and with --anchored-prefix
    plans A alone and says on stderr what it left out. Fails if --head still anchored
    only --from-ledger, if it was ignored (B planned, or no refusal), or if it were
    taken for several ledgers at once."""
    from kaudit.ledger import Ledger, import_files
    from kaudit.ledger._sign import generate_keypair, sign_anchor

    ledger, key, pubkey = tmp_path / "l.sqlite", tmp_path / "k.pem", tmp_path / "k.pem.pub"
    generate_keypair(key, pubkey)
    with Ledger(ledger) as store:
        import_files(store, [("A", verdicts(tmp_path, "a", {"t1": (8, 3)}))])
        head = tmp_path / "head.json"
        head.write_text(json.dumps(sign_anchor(store.head(), key).to_json()))
        import_files(store, [("B", verdicts(tmp_path, "b", {"t1": (8, 5)}))])
    anchor = ["--head", str(head), "--pubkey", str(pubkey)]
    refused = runner.invoke(app, ["plan", "--ledger", str(ledger), *anchor])
    assert refused.exit_code == 2 and "record 9 (" in refused.output
    anchor.append("--anchored-prefix")
    result = runner.invoke(app, ["plan", "--ledger", str(ledger), *anchor, "--json"])
    assert result.exit_code == 0, result.output
    assert [c["model"] for c in json.loads(result.stdout)["cells"]] == ["A"]
    shown = runner.invoke(app, ["plan", "--ledger", str(ledger), *anchor])
    assert (
        "anchor: records 1-8 of 16 are anchored; 8 record(s) after it (records 9-16) are left out"
        in " ".join(shown.stderr.split())
    )
    twice = runner.invoke(app, ["plan", "--ledger", str(ledger), "--ledger", str(ledger), *anchor])
    assert twice.exit_code == 2 and "exactly one --ledger" in twice.output


PREREG = """version: 1
title: flagship
bootstrap: 200
pools:
  dev: {}
  confirm: {}
power: {min_cells: 1, min_runs_per_cell: 8}
claims:
  - id: flagship
    pool: dev
    kind: cell_stochastic
    model: A
    task: t1
    replicate_in: confirm
  - id: overdispersed
    pool: dev
    kind: overdispersion
    power: {min_cells: 20}
"""


def test_prereg_freeze_then_analyze(tmp_path: Path) -> None:
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG)
    result = runner.invoke(app, ["prereg", "freeze", str(spec)])
    assert result.exit_code == 0, result.output
    lock = json.loads((tmp_path / "prereg.yaml.lock").read_text())
    assert len(lock["sha256"]) == 64 and lock["criteria"]["claims"][0]["id"] == "flagship"

    dev = verdicts(tmp_path, "dev", {"t1": (8, 3), "t2": (8, 0)})
    rep = verdicts(tmp_path, "rep", {"t1": (16, 12)})
    result = runner.invoke(
        app,
        [
            "analyze",
            "--prereg",
            str(spec),
            "--model-file",
            f"dev:A={dev}",
            "--model-file",
            f"confirm:A={rep}",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    claims = {c["id"]: c for c in json.loads(result.stdout)["claims"]}
    assert claims["flagship"]["status"] == "confirmed"
    assert claims["overdispersed"]["status"] == "underpowered"
    assert "floor is 20" in claims["overdispersed"]["reason"]


def test_analyze_reads_an_unprefixed_ledger_once_for_every_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG)
    assert runner.invoke(app, ["prereg", "freeze", str(spec)]).exit_code == 0
    ledger = ledger_of(tmp_path, "audit", {"A": verdicts(tmp_path, "a", {"t1": (8, 3)})})
    reads: list[Path] = []
    real = kaudit.ledger.open_ledger

    def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(kaudit.ledger, "open_ledger", counted)
    result = runner.invoke(app, ["analyze", "--prereg", str(spec), str(ledger), "--json"])
    assert result.exit_code == 0, result.output
    assert reads == [ledger]
    claims = {c["id"]: c for c in json.loads(result.stdout)["claims"]}
    # Both pools got the ledger's one cell: 3/8 in dev and again in confirm.
    assert claims["flagship"]["status"] == "confirmed"
    assert claims["flagship"]["reason"].count("3/8") == 2


def test_analyze_refuses_a_changed_or_unfrozen_file(tmp_path: Path) -> None:
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG)
    result = runner.invoke(app, ["analyze", "--prereg", str(spec)])
    assert result.exit_code == 2 and "not frozen" in result.output
    assert runner.invoke(app, ["prereg", "freeze", str(spec)]).exit_code == 0
    spec.write_text(PREREG.replace("min_cells: 20", "min_cells: 2"))
    result = runner.invoke(app, ["analyze", "--prereg", str(spec)])
    assert result.exit_code == 2 and "changed since it was frozen" in result.output
    # Re-freezing a changed file needs --force: the lock is the record of what was promised.
    assert runner.invoke(app, ["prereg", "freeze", str(spec)]).exit_code == 2
    assert runner.invoke(app, ["prereg", "freeze", str(spec), "--force"]).exit_code == 0


def test_freeze_rejects_an_invalid_file(tmp_path: Path) -> None:
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG.replace("title: flagship", "titel: flagship"))
    result = runner.invoke(app, ["prereg", "freeze", str(spec)])
    assert result.exit_code == 2 and "titel" in result.output
    assert not (tmp_path / "prereg.yaml.lock").exists()


def test_every_command_has_an_example_in_its_help() -> None:
    for args in (["stats"], ["plan"], ["prereg", "freeze"], ["analyze"]):
        result = runner.invoke(app, [*args, "--help"])
        assert result.exit_code == 0 and "Example: kaudit" in result.stdout


@pytest.mark.agentrelbench
def test_stats_on_the_dev_pool_reproduces_published_numbers() -> None:
    args = ["stats", "--format", "agentrelbench", "--json"]
    for model, path in dev_files().items():
        args += ["--model-file", f"{model}={path}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert len(out["cells"]) == 80
    assert out["audit_miss_rate"]["pairs"] == 13
    assert round(out["audit_miss_rate"]["pair"], 3) == 0.798
    assert round(out["beta_binomial"]["moments"]["icc"], 3) == 0.124


@pytest.mark.agentrelbench
def test_stats_on_the_dev_pool_imported_into_a_ledger(tmp_path: Path) -> None:
    ledger = ledger_of(tmp_path, "dev", dev_files())
    result = runner.invoke(app, ["stats", str(ledger), "--json", "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert len(out["cells"]) == 80 and sum(c["n"] for c in out["cells"]) == 640
    assert out["audit_miss_rate"]["pairs"] == 13
    assert out["audit_miss_rate"]["pair"] == pytest.approx(83 / 104, abs=1e-12)


def test_analyze_refuses_one_ledger_fed_twice_into_a_pool(tmp_path: Path) -> None:
    """Fails if a copy of a ledger beside it feeds a pool twice (every run counted twice
    with identical hashes); only the same path was refused before."""
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG)
    assert runner.invoke(app, ["prereg", "freeze", str(spec)]).exit_code == 0
    ledger = ledger_of(tmp_path, "audit", {"A": verdicts(tmp_path, "a", {"t1": (8, 3)})})
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(ledger.read_bytes())
    result = runner.invoke(app, ["analyze", "--prereg", str(spec), str(ledger), str(copy)])
    assert result.exit_code == 2, result.output
    assert "holds the same ledger as" in " ".join(result.stderr.split())
