"""Which exceptions the CLI shows as one line and which keep their traceback."""

from __future__ import annotations

import sys

import pytest

from kaudit.cli._common import error_line
from kaudit.cli.main import main
from kaudit.errors import InputError, LedgerError


def test_kaudit_errors_are_one_line_in_the_cli_s_terms() -> None:
    assert error_line(InputError("alpha", "must be in (0, 1),\n got 2.0")) == (
        "--alpha must be in (0, 1), got 2.0"
    )
    assert error_line(LedgerError("use another `campaign` name")) == "use another --campaign name"


def test_a_bare_value_error_is_a_bug_not_a_user_error() -> None:
    """Fails if `error_line` went back to treating every ValueError as bad input."""
    assert error_line(ValueError("math domain error")) is None


def test_a_bug_s_value_error_keeps_its_traceback_through_main(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    """A ValueError from inside kaudit must escape `main`, not become `error: ...` + exit 2."""
    import kaudit._plan  # imported first, so no other module binds the broken function

    def broken(*args: object, **kwargs: object) -> int:
        raise ValueError("a bug deep in the planner")

    monkeypatch.setattr(kaudit._plan, "runs_to_detect", broken)
    monkeypatch.setattr(sys, "argv", ["kaudit", "plan", "--p", "0.1"])
    with pytest.raises(ValueError, match="a bug deep in the planner"):
        main()
