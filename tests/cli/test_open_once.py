"""Every reader command is open -> call -> render: it opens the ledger once.

The command opens the file with `kaudit.open` and hands the snapshot to the library
call, which never opens the file again; what it renders (an HTML page's run viewer
too) comes from that one read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger
from kaudit.ledger._sign import generate_keypair, sign_anchor
from tests.ledger.conftest import run_ledger

runner = CliRunner()


@pytest.fixture(scope="module")
def anchored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A ledger of the mini suite, its signed head and the public key."""
    folder = tmp_path_factory.mktemp("once")
    ledger = run_ledger(folder / "audit.sqlite", k=3)
    key, pubkey = folder / "sign.pem", folder / "sign.pem.pub"
    generate_keypair(key, pubkey)
    with Ledger(ledger, readonly=True) as store:
        head = sign_anchor(store.head(), key)
    (folder / "head.json").write_text(json.dumps(head.to_json()))
    events = folder / "events.jsonl"
    events.write_text('{"model": "simulated:reference", "task": "demo/close-account", '
                      '"harm": false}\n')  # fmt: skip
    return ledger, folder / "head.json", pubkey


def _commands(ledger: Path, head: Path, pubkey: Path) -> dict[str, list[str]]:
    path, anchor = str(ledger), ["--head", str(head), "--pubkey", str(pubkey)]
    page = str(ledger.parent / "page.html")
    events = str(ledger.parent / "events.jsonl")
    return {
        "report": ["report", path, *anchor],
        "report --html": ["report", path, "--html", page, *anchor],
        "stats": ["stats", path, "--bootstrap", "20", *anchor],
        "gate": ["gate", path, "--authority", "propose", *anchor],
        "monitor": ["monitor", "--audit", path, "--events", events, *anchor],
        "export": ["export", path, "--to", "jsonl", *anchor],
        "ledger export": ["ledger", "export", path, *anchor],
        "ledger head": ["ledger", "head", path],
        "plan --from-ledger": ["plan", "--p", "0.1", "--from-ledger", path, *anchor],
        "plan --ledger": ["plan", "--ledger", path, *anchor],
    }


@pytest.mark.parametrize("command", list(_commands(Path("x"), Path("h"), Path("k"))))
def test_each_reader_command_opens_the_ledger_once(
    command: str, anchored: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if a reader command, or the library call it makes, opens the ledger file a
    second time (tried by hand: `report --html` built its page's run viewer by opening
    the file again after its snapshot was closed, reading rows it had not verified)."""
    opened: list[Path] = []
    original = Ledger.__init__

    def counting(self: Ledger, path: str | Path, *args: object, **kwargs: object) -> None:
        opened.append(Path(path))
        original(self, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Ledger, "__init__", counting)
    result = runner.invoke(app, _commands(*anchored)[command])
    assert result.exit_code in (0, 3), (result.output, result.exception)
    assert opened == [anchored[0]], opened
