"""The one place a library argument's name becomes the command line's flag.

kaudit's errors name an argument as the Python API spells it, in backticks
(`` `alpha` must be in (0, 1), got 2``). A shell user typed a flag, so the line they
see names the flag instead (`--alpha must be in (0, 1), got 2`). Most flags are the
argument with dashes; the rest (`stopping` is `--until`, `agents` is `--agent`) are
why this is a table and not a rule. A backticked name the table does not hold stays
as it is: it is a field or a value, not an argument of the command.
"""

from __future__ import annotations

import re

FLAGS: dict[str, str] = {
    "agent_command": "--agent-command",
    "agent_timeout": "--agent-timeout",
    "agents": "--agent",
    "alpha": "--alpha",
    "anchored_prefix": "--anchored-prefix",
    "anchored_prefix=True": "--anchored-prefix",
    "campaign": "--campaign",
    "concurrency": "--concurrency",
    "detect": "--detect",
    "faults": "--faults",
    "family": "--family",
    "fmt": "--format",
    "from_ledger": "--from-ledger",
    "head": "--head",
    "idle_timeout": "--idle-timeout",
    "judge": "--judge",
    "k": "--k",
    "ledgers": "LEDGER",
    "model": "--model",
    "model_files": "--model-file",
    "model_order": "--model-order",
    "out": "--out",
    "p": "--p",
    "pubkey": "--pubkey",
    "stopping": "--until",
    "stopping_alpha": "--until-alpha",
    "substrate": "--substrate",
    "suite": "--suite",
    "tasks": "--tasks",
    "threshold": "--threshold",
    "to": "--to",
    "tools_command": "--tools-command",
    "tools_tag": "--tools-tag",
    "upstream": "--upstream",
    "url": "--substrate",
    "verify=False": "--no-verify",
}
"""Argument of the Python API (as kaudit's messages name it) -> what the CLI calls it."""

_NAMED = re.compile(r"`([^`\s]+)`")


def in_flags(message: str) -> str:
    """`message` with every backticked argument the CLI has a flag for written as the flag."""
    return _NAMED.sub(lambda found: FLAGS.get(found.group(1), found.group(0)), message)
