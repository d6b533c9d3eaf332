"""AgentDojo's suites as kaudit worlds: its environments as tables, its tools on the sandbox.

Needs the optional `agentdojo` package (`pip install 'kaudit[agentdojo]'`), imported
only when an `agentdojo:` suite is loaded. The `agentdojo:SUITE[@VERSION]` suite loader
lives in `kaudit.suites`.
"""

from kaudit.worlds.agentdojo._attack import ATTACK, important_instructions, injectable
from kaudit.worlds.agentdojo._referee import REFEREE, AgentDojoReferee
from kaudit.worlds.agentdojo._tables import TableLayout, layout_of, read_env, rows_of
from kaudit.worlds.agentdojo._tasks import PairSource, build_task, row_edits
from kaudit.worlds.agentdojo._tools import agentdojo_tool, tool_tag
from kaudit.worlds.agentdojo._world import AgentDojoWorld, injections_digest

__all__ = [
    "ATTACK",
    "REFEREE",
    "AgentDojoReferee",
    "AgentDojoWorld",
    "PairSource",
    "TableLayout",
    "agentdojo_tool",
    "build_task",
    "important_instructions",
    "injectable",
    "injections_digest",
    "layout_of",
    "read_env",
    "row_edits",
    "rows_of",
    "tool_tag",
]
