"""What the judge is shown of one run: the task, the turns, the tool calls and their results.

Only what a transcript grader in the field sees: never the database, the state diff, the
verdict, the success checks or the damage spec. The rendering is deterministic, so the
digest of the messages names exactly what a grade was given.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kaudit.grade._rubric import Rubric
from kaudit.ledger import RunRecord

__all__ = [
    "RESULT_CHARS",
    "JudgeCase",
    "case_of",
    "judge_messages",
    "messages_digest",
    "render_case",
]

RESULT_CHARS = 4000
"""A tool result longer than this is cut (and says so): it bounds the judge's prompt."""


@dataclass(frozen=True)
class JudgeCase:
    """One run as the judge reads it."""

    system_prompt: str
    prompt: str
    transcript: tuple[dict[str, Any], ...]
    tool_calls: tuple[dict[str, Any], ...]
    final_message: str | None
    termination: str
    agent_error: str | None


def case_of(record: RunRecord, system_prompt: str, prompt: str) -> JudgeCase:
    """The judge's view of `record`, given its task's prompts (the record does not keep them)."""
    return JudgeCase(
        system_prompt=system_prompt,
        prompt=prompt,
        transcript=tuple(record.transcript),
        tool_calls=tuple(record.tool_calls),
        final_message=record.final_message,
        termination=record.termination,
        agent_error=record.agent_error,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _cut(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    return f"{text[:RESULT_CHARS]}…[{len(text) - RESULT_CHARS} more characters cut]"


def _call_lines(call: dict[str, Any], results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [f"  tool call {call.get('name')}({_text(call.get('arguments', {}))})"]
    done = results.get(str(call.get("id")))
    if done is None and isinstance(call.get("result"), dict):
        done = call  # an external agent's call: the result it sent back to its model
    if done is None:
        lines.append("  result: (none recorded)")
        return lines
    result = done.get("result") or {}
    if isinstance(result, dict) and result.get("ok") is False:
        lines.append(f"  result: ERROR {_cut(_text(result.get('error', result)))}")
    else:
        content = result.get("content", result) if isinstance(result, dict) else result
        lines.append(f"  result: {_cut(_text(content))}")
    return lines


def render_case(case: JudgeCase) -> str:
    """The run as plain text, turn by turn, each tool call followed by its result."""
    results = {str(c.get("id")): c for c in case.tool_calls}
    lines = [
        "## Task given to the agent",
        f"System prompt: {case.system_prompt}",
        f"User prompt: {case.prompt}",
        "",
        "## The agent's run",
    ]
    for number, turn in enumerate(case.transcript, start=1):
        lines.append(f"Turn {number}:")
        if turn.get("content"):
            lines.append(f"  agent says: {turn['content']}")
        for call in turn.get("tool_calls") or []:
            lines += _call_lines(call, results)
        if turn.get("stalled"):
            lines.append("  (the agent stalled)")
    lines.append("")
    ended = case.termination + (f" ({case.agent_error})" if case.agent_error else "")
    lines.append(f"The run ended: {ended}.")
    lines.append(f"Final message: {case.final_message or '(none)'}")
    return "\n".join(lines)


def judge_messages(rubric: Rubric, case: JudgeCase) -> tuple[str, str]:
    """(system, user) texts of the judge's one request."""
    return rubric.text, render_case(case) + "\n\nAnswer with the JSON object only."


def messages_digest(system: str, user: str) -> str:
    """sha256 of the judge's request texts, recorded with the grade."""
    return hashlib.sha256(json.dumps([system, user]).encode()).hexdigest()
