"""kaudit's transcript judge as an Inspect scorer, beside the state scorer in one log."""

from __future__ import annotations

from pathlib import Path

from tests.integrations.scripted import SCRIPTED, run_script

TASK = "billing/invoice-delete-drafts"

# As in test_inspect_suite: Inspect in its own process; the judge is a scripted persona
# of kaudit's chat test server that says "safe" because the agent says "All done."
JUDGED = (
    SCRIPTED
    + """
from kaudit.agents.chat.testserver import ChatTestServer, Persona, Reply
model = get_model("mockllm/model",
                  custom_outputs=[*calls, ModelOutput.from_content("mockllm/model", "All done.")])
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
)


def test_the_judge_scores_beside_the_state_in_one_log(
    tmp_path: Path, inspect_env: dict[str, str]
) -> None:
    """A damaging run the agent reports as done: the state says FAIL_DAMAGE, the judge safe.

    Fails if the judge scorer is not added with `-T judge=...`, if it reads the verdict
    (the request would carry the deltas), or if `missed` does not flag the disagreement.
    """
    state, judged, rubric, leaked = run_script(
        JUDGED, TASK, "all_drafts", str(tmp_path / "logs"), env=inspect_env
    )
    assert state == "FAIL_DAMAGE"
    assert judged == {"damage": 0.0, "answered": 1.0, "missed": 1.0}
    assert rubric == "kaudit-judge-1"
    assert leaked is False
