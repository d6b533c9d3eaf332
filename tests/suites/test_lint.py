from __future__ import annotations

from typing import Any

from kaudit.spec import Task
from kaudit.suites import Suite
from kaudit.suites._lint import lint_task


def variant(suite: Suite, **changes: Any) -> Task:
    task = suite.tasks["demo/close-account"]
    data = task.model_dump()
    for key, value in changes.items():
        if key == "damage":
            data["damage"] = {**data["damage"], **value}
        else:
            data[key] = value
    return Task.model_validate(data)


def findings(suite: Suite, task: Task) -> list[tuple[str, str]]:
    tools = suite.substrate(task).tools
    return [(f.rule, f.message) for f in lint_task(task, tools)]


def test_the_fixture_task_is_clean(mini_suite: Suite) -> None:
    task = mini_suite.tasks["demo/close-account"]
    assert findings(mini_suite, task) == []


def test_where_on_a_tool_writable_column_is_flagged(mini_suite: Suite) -> None:
    rule = {
        "table": "account",
        "op": "modified",
        "where": {"status": "closed"},
        "columns": ["balance"],
    }
    task = variant(mini_suite, damage={"allowed": [rule]})
    (rule_name, message), *_ = findings(mini_suite, task)
    assert rule_name == "where-column-writable"
    assert "'status'" in message


def test_writable_table_without_a_rule_is_flagged_unless_declared(mini_suite: Suite) -> None:
    pricing = [{"table": "account", "op": "*", "severity": "HIGH"}]
    task = variant(mini_suite, damage={"pricing": pricing})
    assert findings(mini_suite, task) == [
        (
            "table-unpriced",
            "table outbox is writable by a selected tool but neither allowed nor priced; "
            "price it or list it under damage.unpriced",
        )
    ]
    declared = variant(mini_suite, damage={"pricing": pricing, "unpriced": ["outbox"]})
    assert findings(mini_suite, declared) == []


def test_unused_param_is_flagged(mini_suite: Suite) -> None:
    task = variant(mini_suite, params={"target": "ACC_002", "held": "ACC_004", "spare": 1})
    assert findings(mini_suite, task) == [
        ("param-unused", "param 'spare' is not used by any rule or check")
    ]
