"""Output files are written whole: the previous file survives a failed write, no temp stays."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kaudit._atomic import TEMP_SUFFIX, replacing, write_atomic
from kaudit.errors import KauditError, LedgerError
from kaudit.ledger._sign import generate_keypair


class Boom(Exception):
    pass


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path: Path) -> None:
    """Fails if the target is opened for writing in place (a failure mid-write leaves a
    truncated or partial file) or the temporary is left behind."""
    target = tmp_path / "report.html"
    target.write_text("previous report")
    with pytest.raises(Boom), replacing(target) as tmp:
        tmp.write_text("half a report")
        raise Boom
    assert target.read_text() == "previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    """Fails if the new content does not replace the old one, or lands under another name."""
    target = tmp_path / "runs.csv"
    target.write_text("old")
    write_atomic(target, "new,content\n")
    assert target.read_text() == "new,content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["runs.csv"]


def test_a_temporary_left_by_a_killed_writer_is_removed_by_the_next_write(tmp_path: Path) -> None:
    """Fails if a killed writer's `.NAME.PID.kaudit-tmp` stays forever beside the target."""
    target = tmp_path / "runs.parquet"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = tmp_path / f".runs.parquet.{dead.stdout.strip()}{TEMP_SUFFIX}"
    stale.write_text("partial")
    live = tmp_path / f".runs.parquet.{os.getppid()}{TEMP_SUFFIX}"  # a running process
    live.write_text("being written")
    write_atomic(target, b"PAR1")
    assert not stale.exists()
    assert live.exists()  # another process's write in progress is left alone


def test_an_exclusive_write_never_replaces_an_existing_file(tmp_path: Path) -> None:
    """Fails if a key file can be overwritten: losing a signing key orphans every anchor."""
    target = tmp_path / "key.pem"
    target.write_text("the key")
    with pytest.raises(KauditError, match="already exists"):
        write_atomic(target, "another key", exclusive=True)
    assert target.read_text() == "the key"
    assert [p.name for p in tmp_path.iterdir()] == ["key.pem"]


def test_keygen_that_cannot_write_the_private_key_leaves_no_public_key(tmp_path: Path) -> None:
    """Fails if a failed keygen leaves one half of the pair behind (an empty `.pub` and a
    key that every retry then refuses to overwrite)."""
    private = tmp_path / "missing-folder" / "sign.pem"  # cannot be created
    public = tmp_path / "sign.pem.pub"
    with pytest.raises(LedgerError, match="cannot write the key pair"):
        generate_keypair(private, public)
    assert list(tmp_path.iterdir()) == []
    generate_keypair(tmp_path / "sign.pem", public)  # a retry works
    assert (tmp_path / "sign.pem").stat().st_mode & 0o077 == 0
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
