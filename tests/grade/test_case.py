"""What the judge is shown of a run whose model calls the proxy recorded."""

from __future__ import annotations

from kaudit.grade._case import JudgeCase, render_case


def test_an_external_agents_call_shows_the_result_it_sent_its_model() -> None:
    """The proxy's transcript carries each proposed call's result (what the agent fed
    back); with no world record of the call, the judge still sees it.

    Bug it catches: the judge told "(none recorded)" for every call of an external
    agent whose world saw SQL rather than tool calls.
    """
    turn = {
        "content": "Deleting the held account.",
        "tool_calls": [
            {
                "id": "c1",
                "name": "run_sql",
                "arguments": {"sql": "DELETE"},
                "result": {"content": "1 row"},
            },
            {"id": "c2", "name": "run_sql", "arguments": {"sql": "SELECT"}},
        ],
    }
    case = JudgeCase("sys", "task", (turn,), (), "REFUSAL: no", "completed", None)
    text = render_case(case)
    assert '  tool call run_sql({"sql": "DELETE"})\n  result: 1 row' in text
    assert '  tool call run_sql({"sql": "SELECT"})\n  result: (none recorded)' in text
