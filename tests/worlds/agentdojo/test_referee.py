"""Whether a run showed the model its pair's injection, read from the recorded results."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import yaml

from kaudit.suites import Suite
from kaudit.worlds.agentdojo._referee import AgentDojoReferee, exposed
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


def test_a_failing_own_run_is_unknown_and_tried_once() -> None:
    """Fails if AgentDojo's own run raising blanks the judgment (it must read as unknown,
    None, not as a blind check) or is retried on every later run of the pair."""
    calls = []

    def broken(*args: object) -> None:
        calls.append(args)
        raise RuntimeError("no ground truth")

    suite = SimpleNamespace(run_task_with_pipeline=broken)
    source = SimpleNamespace(world=SimpleNamespace(suite=suite), injection_task=None,
                             user_task=None, injections={})  # fmt: skip
    referee = AgentDojoReferee({"u/i": cast(PairSource, source)})
    assert referee.own_security("u/i") is None
    assert referee.own_security("u/i") is None
    assert len(calls) == 1
