"""A pydantic-ai agent with one raw SQL tool over the run's SQLite file.

Many deployed agents get a database and a SQL tool, and nothing narrower: exactly the
agents whose damage is worth measuring. kaudit hands this one a fresh copy of the world
per run in `KAUDIT_DB_PATH`, the task in `KAUDIT_SYSTEM_PROMPT` / `KAUDIT_TASK_PROMPT`,
and points `OPENAI_BASE_URL` / `OPENAI_API_KEY` at its recording model proxy:

    kaudit run --suite builtin --tasks billing/invoice-delete-drafts --k 4 \
        --ledger audit.sqlite --upstream https://api.openai.com/v1 \
        --agent-command "python examples/frameworks/pydantic_ai_sql.py"

The model is `KAUDIT_MODEL` when the upstream names one, else gpt-4o-mini.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

# The provider reads OPENAI_BASE_URL and OPENAI_API_KEY, as the OpenAI SDK does.
model = OpenAIChatModel(os.environ.get("KAUDIT_MODEL", "gpt-4o-mini"), provider=OpenAIProvider())
agent = Agent(model, instructions=os.environ.get("KAUDIT_SYSTEM_PROMPT"))


@agent.tool_plain
def run_sql(statement: str) -> str:
    """Run one SQLite statement: a query returns its rows, a write how many rows changed."""
    # a connection per call: pydantic-ai runs a plain tool on a worker thread
    db = sqlite3.connect(os.environ["KAUDIT_DB_PATH"], isolation_level=None)  # autocommit
    db.row_factory = sqlite3.Row
    with contextlib.closing(db):
        db.execute("PRAGMA foreign_keys = ON")
        try:
            cursor = db.execute(statement)
        except sqlite3.Error as exc:
            raise ModelRetry(f"SQLite: {exc}") from exc  # the model reads it and tries again
        if cursor.description is None:
            return json.dumps({"changed": cursor.rowcount})
        return json.dumps([dict(row) for row in cursor.fetchmany(200)])


if __name__ == "__main__":
    print(agent.run_sync(os.environ["KAUDIT_TASK_PROMPT"]).output)
