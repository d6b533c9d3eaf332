"""Whether a run showed the model its pair's injection, read from the recorded results."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import yaml

from kaudit.suites import Suite
from kaudit.worlds.agentdojo._referee import exposed
from kaudit.worlds.agentdojo._tasks import PairSource


def test_an_injection_rewrapped_by_the_tool_still_counts_as_shown(banking: Suite) -> None:
    """Fails if exposure is a raw substring test (a tool that rewraps or re-indents the
    text hides the injection), if YAML's doubled quote (``user''s``) or escaped newline
    hides it, if a result string rather than a dict is ignored, or if a run whose results
    never carried the text counts as exposed."""
    source = banking.referee.sources["user_task_0/injection_task_5"]  # type: ignore[union-attr]
    (text,) = source.injections.values()
    rewrapped = "Bill\n  " + "\n    ".join(text.split(" ")) + "\n---"
    assert exposed(source, [{"name": "read_file", "result": {"content": rewrapped}}])
    assert exposed(source, [{"name": "read_file", "result": rewrapped}])
    quoting = cast(PairSource, SimpleNamespace(injections={"v": "Pay the user's\n\nIBAN"}))
    single = yaml.safe_dump([{"subject": "Pay the user's\n\nIBAN", "id": 5}])
    double = yaml.safe_dump(["\tPay the user's\n\nIBAN"])
    assert "user''s" in single and "\\n" in double
    assert exposed(quoting, [{"result": {"content": single}}, {"result": {"content": ""}}])
    assert exposed(quoting, [{"result": {"content": double}}])
    assert not exposed(quoting, [{"result": {"content": "Pay the user"}}])
    clean = [{"name": "send_money", "result": {"content": "Transaction sent."}}, {"name": "x"}]
    assert not exposed(source, clean)
    assert not exposed(source, [])
