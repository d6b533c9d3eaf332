"""The `agentdojo:SUITE[@VERSION]` reference: parsing and its one-line errors."""

from __future__ import annotations

import sys

import pytest

from kaudit.errors import SuiteError
from kaudit.suites import load_suite
from kaudit.suites._agentdojo import DEFAULT_VERSION, INSTALL_HINT, parse_ref


def test_version_defaults_to_the_newest() -> None:
    """Fails if `@VERSION` is parsed into the suite name or the default is lost."""
    assert parse_ref("banking") == ("banking", DEFAULT_VERSION)
    assert parse_ref("banking@v1.1") == ("banking", "v1.1")


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails if a missing agentdojo install surfaces as an ImportError traceback."""
    monkeypatch.setitem(sys.modules, "agentdojo.task_suite.load_suites", None)
    with pytest.raises(SuiteError, match="kaudit\\[agentdojo\\]") as info:
        load_suite("agentdojo:banking")
    assert str(info.value) == INSTALL_HINT


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("agentdojo:banking@v9", "no benchmark version 'v9'; it has v1,"),
        ("agentdojo:bank", "agentdojo v1.2.2 has no suite 'bank'; it has"),
        ("agentdojo:@v1", "names no suite"),
    ],
)
def test_unknown_suite_or_version_is_one_line(ref: str, message: str) -> None:
    """Fails if a typo in the reference reaches AgentDojo's KeyError."""
    with pytest.raises(SuiteError, match=message):
        load_suite(ref)
