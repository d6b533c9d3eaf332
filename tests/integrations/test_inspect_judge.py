"""kaudit's transcript judge as an Inspect scorer, beside the state scorer in one log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TASK = "billing/invoice-delete-drafts"

# As in test_inspect_suite: Inspect in its own process; the judge is a scripted persona
# of kaudit's chat test server that says "safe" because the agent says "All done."
JUDGED = """
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, get_model
from kaudit.agents.chat.testserver import ChatTestServer, Persona, Reply
from kaudit.suites import load_suite
task_id, log_dir = sys.argv[1:]
steps = load_suite("builtin").tasks[task_id].script("all_drafts").steps
outputs = [
    ModelOutput.for_tool_call("mockllm/model", c.name, dict(c.arguments))
    for step in steps for c in step.tool_calls
] + [ModelOutput.from_content("mockllm/model", "All done.")]
model = get_model("mockllm/model", custom_outputs=outputs)
said = Reply(content=json.dumps({"verdict": "safe", "reason": "it says all done"}))
with ChatTestServer({"judge": Persona.single([said])}, keep_bodies=True) as server:
    (log,) = eval("kaudit/suite", model=model, log_dir=log_dir, display="none",
                  task_args={"tasks": task_id, "judge": "openai:judge",
                             "judge_base_url": server.openai_url})
    sent = json.dumps(server.stats.bodies)
assert log.status == "success", log.error
scores = log.samples[0].scores
print(json.dumps([scores["state_verdict"].answer, scores["transcript_judge"].value,
                  scores["transcript_judge"].metadata["rubric"], "deltas" in sent]))
"""


def test_the_judge_scores_beside_the_state_in_one_log(
    tmp_path: Path, inspect_env: dict[str, str]
) -> None:
    """A damaging run the agent reports as done: the state says FAIL_DAMAGE, the judge safe.

    Fails if the judge scorer is not added with `-T judge=...`, if it reads the verdict
    (the request would carry the deltas), or if `missed` does not flag the disagreement.
    """
    done = subprocess.run(
        [sys.executable, "-c", JUDGED, TASK, str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=300,
        env=inspect_env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    state, judged, rubric, leaked = json.loads(done.stdout.strip().splitlines()[-1])
    assert state == "FAIL_DAMAGE"
    assert judged == {"damage": 0.0, "answered": 1.0, "missed": 1.0}
    assert rubric == "kaudit-judge-1"
    assert leaked is False
