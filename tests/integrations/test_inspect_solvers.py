"""Solvers that are not kaudit's on kaudit's sandbox, scored by `state_verdict`."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaudit.suites import load_suite
from tests.integrations.scripted import SCRIPTED, run_script

TASK = "billing/invoice-delete-drafts"

REPORT = """
assert log.status == "success", log.error
score = log.samples[0].scores["state_verdict"]
record = score.metadata["record"]
print(json.dumps([score.answer, [c["name"] for c in record["tool_calls"]],
                  record["final_message"]]))
"""

# Inspect's own ReAct agent, given the sandbox's tools by `kaudit_tools()`, replaces
# kaudit's tool loop; the mock model replays a script's calls, then submits.
REACT = (
    SCRIPTED
    + """
from inspect_ai.agent import react
from kaudit.integrations.inspect_tasks import kaudit_tools
done = ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "Done as asked."},
                                 content="")
model = get_model("mockllm/model", custom_outputs=[*calls, done])
(log,) = eval("kaudit/suite", task_args={"tasks": task_id}, model=model, log_dir=log_dir,
              solver=react(tools=[kaudit_tools()]), display="none")
"""
    + REPORT
)

# Inspect's agent bridge: a third-party agent written against the plain OpenAI SDK (its
# own loop, its own tool dispatch) whose model calls Inspect routes to its model.
BRIDGE = (
    SCRIPTED
    + """
from openai import AsyncOpenAI
from inspect_ai.agent import AgentState, agent, agent_bridge
from inspect_ai.tool import ToolDef
from kaudit.integrations.inspect_tasks import kaudit_tools

@agent
def openai_sdk_agent():
    async def execute(state: AgentState) -> AgentState:
        tools = {d.name: d for d in map(ToolDef, await kaudit_tools().tools())}
        specs = [{"type": "function", "function": {"name": d.name, "description":
                  d.description, "parameters": d.parameters.model_dump(exclude_none=True)}}
                 for d in tools.values()]
        messages = [{"role": m.role, "content": m.text} for m in state.messages]
        async with agent_bridge(state) as bridge:
            client = AsyncOpenAI(api_key="unused")
            while True:
                reply = await client.chat.completions.create(
                    model="inspect", messages=messages, tools=specs)
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    result = await tools[call.function.name].tool(
                        **json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id,
                                     "content": str(result)})
            return bridge.state
    return execute

done = ModelOutput.from_content("mockllm/model", "Done as asked.")
model = get_model("mockllm/model", custom_outputs=[*calls, done])
(log,) = eval("kaudit/suite", task_args={"tasks": task_id}, model=model, log_dir=log_dir,
              solver=openai_sdk_agent(), display="none")
"""
    + REPORT
)


def expected_calls(script: str) -> list[str]:
    steps = load_suite("builtin").tasks[TASK].script(script).steps
    return [c.name for step in steps for c in step.tool_calls]


@pytest.mark.parametrize(
    ("solver", "script", "outcome"),
    [("react", "all_drafts", "FAIL_DAMAGE"), ("bridge", "oracle", "PASS")],
)
def test_a_foreign_agent_on_the_sandbox_is_scored_by_the_state(
    tmp_path: Path, inspect_env: dict[str, str], solver: str, script: str, outcome: str
) -> None:
    """Inspect's react() and an OpenAI-SDK agent over Inspect's agent bridge, not kaudit's loop.

    Fails if replacing the task's solver drops the sandbox (setup must still open it), if
    the agent's calls do not reach the sandbox (both would score FAIL_SAFE), if the score
    is the agent's words (both agents end with the same message), or if the run's final
    message is not the agent's last output.
    """
    script_text = REACT if solver == "react" else BRIDGE
    answer, calls, final = run_script(
        script_text, TASK, script, str(tmp_path / "logs"), env=inspect_env
    )
    assert answer == outcome
    assert calls == expected_calls(script)
    assert final == "Done as asked."
