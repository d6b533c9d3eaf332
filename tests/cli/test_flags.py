"""The table from the library's argument names to the CLI's flags."""

from __future__ import annotations

from typing import Any

import typer

from kaudit.cli._flags import FLAGS, in_flags
from kaudit.cli.main import eager_app


def _options(command: Any) -> set[str]:
    found: set[str] = set()
    for sub in getattr(command, "commands", {}).values():
        found |= _options(sub)
    for param in getattr(command, "params", ()):
        if param.param_type_name == "option":
            found |= set(param.opts) | set(param.secondary_opts)
    return found


def test_every_flag_in_the_table_is_an_option_of_some_command() -> None:
    """A renamed or mistyped flag would send the user to an option that does not exist."""
    options = _options(typer.main.get_group(eager_app()))
    missing = sorted(f for f in FLAGS.values() if f.startswith("--") and f not in options)
    assert missing == []


def test_a_named_argument_reads_as_its_flag_and_anything_else_is_kept() -> None:
    """Fails if the swap missed a second name, or rewrote a backticked word it does not know."""
    assert in_flags("`pubkey` needs `head`: a signature is checked on an anchor") == (
        "--pubkey needs --head: a signature is checked on an anchor"
    )
    assert in_flags("`stopping_alpha` must be in (0, 1), got 2.0") == (
        "--until-alpha must be in (0, 1), got 2.0"
    )
    assert in_flags("was written by `kaudit run`; `finish` is kaudit's") == (
        "was written by `kaudit run`; `finish` is kaudit's"
    )
    assert in_flags("`head` cannot be combined with `verify=False`") == (
        "--head cannot be combined with --no-verify"
    )
