"""The head of each Inspect script these tests run in a process of its own.

Inspect's Python API runs in its own process (pytest's warnings-as-errors would fail
Inspect's internals). The head reads `task_id, script, log_dir` from argv and builds
`calls`, the mock model's outputs replaying the script's tool calls; each test adds
how the model ends, the eval, and what it prints.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

SCRIPTED = """
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, get_model
from kaudit.suites import load_suite
task_id, script, log_dir = sys.argv[1:]
steps = load_suite("builtin").tasks[task_id].script(script).steps
calls = [
    ModelOutput.for_tool_call("mockllm/model", c.name, dict(c.arguments))
    for step in steps for c in step.tool_calls
]
"""


def run_script(script: str, *args: str, env: dict[str, str]) -> Any:
    """Run an Inspect script in its own process; the JSON of its last line of output."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
