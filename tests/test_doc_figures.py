"""The numbers in the README tour and the statistics page come from their own commands.

Each ```console block of the README's tour is replayed: every `$ kaudit ...` line runs in
a fresh directory, and every line the README shows after it (``...`` elides lines) must
appear in the real output, in order, up to table borders and spacing. The statistics
page's published-pool figures are recomputed with `kaudit stats` on the dev pool.
A stale figure (the tour once said 32 damage runs and 16 pairs; the command gives 30 and
15) makes these tests fail. A shown line may hold `…` where the real output differs on
every run (the ledger head's hash); the rest of the line must still match.
The suite page's counts (tasks per
table, tools per tag) are recounted from the suite and the world.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stats.arb_data import dev_files

ROOT = Path(__file__).resolve().parent.parent
KAUDIT = Path(sys.executable).parent / "kaudit"
BORDERS = str.maketrans({c: " " for c in "│┌┐└┘─┬┴├┤┼━┃"})


def normalized(line: str) -> str:
    return " ".join(line.translate(BORDERS).split())


def console_blocks(markdown: str, section: str) -> list[list[str]]:
    """The ```console blocks of one `## section` of a Markdown file, as lines."""
    start = markdown.index(f"## {section}\n")
    end = markdown.find("\n## ", start + 1)
    body = markdown[start : end if end != -1 else None]
    return [block.splitlines() for block in re.findall(r"```console\n(.*?)```", body, re.S)]


def run_kaudit(command: str, cwd: Path) -> list[str]:
    args = shlex.split(command)
    assert args[0] == "kaudit", command
    env = os.environ | {"COLUMNS": "110", "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run(
        [str(KAUDIT), *args[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    return (done.stdout + done.stderr).splitlines()


def matches(expected: str, line: str) -> bool:
    """`line` is `expected`, where each `…` in `expected` stands for any text."""
    if "…" not in expected:
        return line == expected
    pattern = ".*".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, line) is not None


def assert_shown_in_order(shown: list[str], actual: list[str], command: str) -> None:
    """Every shown line (but `...`) appears in `actual`, in the same order."""
    lines = [normalized(line) for line in actual]
    position = 0
    for expected in (normalized(line) for line in shown):
        if not expected or expected == "...":
            continue
        found = next((i for i in range(position, len(lines)) if matches(expected, lines[i])), None)
        if found is None:
            pytest.fail(
                f"`{command}` does not print {expected!r}; it printed:\n" + "\n".join(actual)
            )
        position = found + 1


def test_the_readme_tour_is_real_output(tmp_path: Path) -> None:
    """Fails if any figure of the tour differs from what its command prints today."""
    blocks = console_blocks((ROOT / "README.md").read_text(), "Tour")
    assert len(blocks) >= 3
    for block in blocks:
        command, shown = None, []
        for line in [*block, "$ "]:
            if line.startswith("$ "):
                if command:
                    assert_shown_in_order(shown, run_kaudit(command, tmp_path), command)
                command, shown = line[2:].strip(), []
            else:
                shown.append(line)


def dev_pool_stats(*extra: str) -> list[str]:
    args = ["stats", "--format", "agentrelbench", *extra]
    for model, path in dev_files().items():
        args += ["--model-file", f"{model}={path}"]
    return run_kaudit(shlex.join(["kaudit", *args]), ROOT)


@pytest.mark.agentrelbench
def test_the_statistics_page_figures_are_what_stats_prints() -> None:
    """Fails if the published-pool figures on docs/statistics.md (event miss 0.744,
    MLE 0.140 [0.043, 0.342], LR p 4.7e-5, ICC 0.1241) drifted from the command."""
    page = (ROOT / "docs" / "statistics.md").read_text()
    out = json.loads("\n".join(dev_pool_stats("--json")))
    miss, mle = out["audit_miss_rate"], out["beta_binomial"]["mle"]
    sentence = " ".join(page.split())
    assert f"pair-weighted k = 1 miss rate 83/104 = {miss['pair']:.4f}" in sentence
    assert f"event-weighted {miss['event']:.3f}" in sentence
    assert f"method-of-moments ICC {out['beta_binomial']['moments']['icc']:.4f}" in sentence
    low, high = mle["icc_ci"]
    assert (
        f"maximum-likelihood ICC {mle['icc']:.3f} with profile interval ({low:.3f}, {high:.3f})"
        in (sentence)
    )
    assert f"LR p = {mle['lr_p']:.1e}".replace("e-0", "e-") in sentence
    (table,) = [b for b in re.findall(r"```[a-z]*\n(.*?)```", page, re.S) if "audit miss rate" in b]
    assert_shown_in_order(table.splitlines(), dev_pool_stats(), "kaudit stats (dev pool)")


def test_the_suite_page_counts_are_the_suites_and_the_worlds() -> None:
    """Fails if docs/suite.md's tables miss a task (the README once tabled 24 of 32) or its
    tool counts drift from the world's tools (it once said 75: 42/19/14; there are 77)."""
    from collections import Counter

    from kaudit.suites import load_suite
    from kaudit.worlds._world import get_world

    page = (ROOT / "docs" / "suite.md").read_text()
    suite = load_suite("builtin", check=False)
    tabled = re.findall(r"^\| `([a-z]+/[a-z0-9-]+)` \| (?:itsm|csm|billing) \|", page, re.M)
    assert sorted(set(tabled)) == sorted(suite.tasks)
    tags = Counter(tool.tag for tool in get_world("enterprise").tools.values())
    sentence = (
        f"{sum(tags.values())} tools: {tags['read']} `read`, {tags['reversible_write']} "
        f"`reversible_write`, {tags['irreversible']} `irreversible`"
    )
    assert sentence in " ".join(page.split())
    rows = re.findall(
        r"^\| `[a-z_]+` \| (?:itsm|csm|billing) \| (read|reversible_write|irreversible) \|",
        page,
        re.M,
    )
    assert Counter(rows) == tags
