"""The single-writer lock follows the file, not the spelling of its path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import LedgerError
from kaudit.ledger import Ledger
from tests.conftest import FIXTURES

ROOT = Path(__file__).parent.parent.parent


def aliases(tmp_path: Path) -> dict[str, Path]:
    real = tmp_path / "real" / "audit.sqlite"
    Ledger(real).close()
    (tmp_path / "elsewhere").mkdir()
    symlink = tmp_path / "elsewhere" / "via-symlink.sqlite"
    symlink.symlink_to(real)
    hardlink = tmp_path / "elsewhere" / "via-hardlink.sqlite"
    os.link(real, hardlink)
    return {"real": real, "symlink": symlink, "hardlink": hardlink}


@pytest.mark.parametrize("alias", ["symlink", "hardlink"])
def test_a_second_writer_through_another_path_is_refused(tmp_path: Path, alias: str) -> None:
    """A lock file named after the path (audit.sqlite.lock) let both writers in."""
    paths = aliases(tmp_path)
    with (
        Ledger(paths["real"]) as first,
        Ledger(paths[alias]) as second,
        first.writer_lock(),
        pytest.raises(LedgerError, match="another kaudit process is writing"),
        second.writer_lock(),
    ):
        pass


@pytest.mark.parametrize("alias", ["symlink", "hardlink"])
def test_a_second_kaudit_run_through_a_link_fails_with_one_line(tmp_path: Path, alias: str) -> None:
    """The second process, holding nothing, meets the first one's lock: one line, exit 2."""
    paths = aliases(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, fcntl; from kaudit.ledger import Ledger\n"
            "ledger = Ledger(sys.argv[1])\n"
            "with ledger.writer_lock():\n"
            "    print('locked', flush=True); sys.stdin.read()",
            str(paths["real"]),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", "2"]
        result = CliRunner().invoke(app, [*args, "--ledger", str(paths[alias])])
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()
    assert result.exit_code == 2
    note, error = result.stderr.strip().splitlines()  # the simulated-agent note, the error
    assert note.startswith("note: simulated agent")
    assert error.startswith("error: ") and "another kaudit process is writing" in error
    assert "Traceback" not in result.output
