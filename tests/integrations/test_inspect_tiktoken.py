"""tiktoken's o200k_base table written from quicktok, as tiktoken itself would cache it."""

from __future__ import annotations

from pathlib import Path

import pytest
import tiktoken.load

from kaudit.integrations._inspect_tiktoken import O200K_SHA256, O200K_URL, ensure_o200k_cache


def test_the_table_lands_where_tiktoken_reads_it_and_passes_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if the conversion is wrong (tiktoken's own hash check would reject the file
    and try the download) or the file is named or placed where tiktoken does not look."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.load, "read_file", _no_download)
    path = ensure_o200k_cache()
    assert path is not None and path.parent == tmp_path
    ranks = tiktoken.load.load_tiktoken_bpe(O200K_URL, expected_hash=O200K_SHA256)
    assert len(ranks) == 199998
    assert ranks[b"hello"] == 24912
    assert ensure_o200k_cache() == path  # a second call finds it and writes nothing


def test_a_cache_turned_off_is_left_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails if kaudit writes somewhere when the user set `TIKTOKEN_CACHE_DIR=""`."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert ensure_o200k_cache() is None


def _no_download(blobpath: str) -> bytes:
    raise AssertionError(f"tiktoken tried to download {blobpath}")
