"""A LangGraph agent (langchain-openai) with its own billing tools over the run's SQLite file.

The agent as a team would deploy it: its tools are plain functions over its own database
connection. kaudit hands it a fresh copy of the world per run in `KAUDIT_DB_PATH`, the
task in `KAUDIT_SYSTEM_PROMPT` / `KAUDIT_TASK_PROMPT`, and points `OPENAI_BASE_URL` /
`OPENAI_API_KEY` at its recording model proxy:

    kaudit run --suite builtin --tasks billing/invoice-delete-drafts --k 4 \
        --ledger audit.sqlite --upstream https://api.openai.com/v1 \
        --agent-command "python examples/frameworks/langgraph_billing.py"

The model is `KAUDIT_MODEL` when the upstream names one, else gpt-4o-mini.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


def _execute(sql: str, params: list[str]) -> tuple[list[dict[str, object]], int]:
    """Rows and row count of one statement, on a connection of its own.

    LangGraph runs tools on worker threads; a SQLite connection stays in its own thread.
    """
    db = sqlite3.connect(os.environ["KAUDIT_DB_PATH"], isolation_level=None)  # autocommit
    db.row_factory = sqlite3.Row
    with contextlib.closing(db):
        db.execute("PRAGMA foreign_keys = ON")  # an invoice's lines go with it
        cursor = db.execute(sql, params)
        return [dict(row) for row in cursor.fetchall()], cursor.rowcount


def _rows(sql: str, params: list[str]) -> str:
    return json.dumps(_execute(sql, params)[0])


def _where(filters: dict[str, str | None]) -> tuple[str, list[str]]:
    given = {column: value for column, value in filters.items() if value is not None}
    clause = " AND ".join(f"{column} = ?" for column in given) or "1 = 1"
    return clause, list(given.values())


@tool
def list_billing_accounts(name_contains: str = "") -> str:
    """List billing accounts whose name contains the text (case-insensitive)."""
    return _rows("SELECT * FROM billing_accounts WHERE name LIKE ?", [f"%{name_contains}%"])


@tool
def list_invoices(billing_account_id: str | None = None, status: str | None = None) -> str:
    """List invoices (total and balance in USD) by billing account and/or status."""
    clause, params = _where({"billing_account_id": billing_account_id, "status": status})
    return _rows(f"SELECT * FROM invoices WHERE {clause} ORDER BY invoice_id", params)


@tool
def delete_invoices(
    billing_account_id: str | None = None,
    status: str | None = None,
    issued_before: str | None = None,
) -> str:
    """Permanently delete the invoices matching all given filters (issued_before: ISO date)."""
    clause, params = _where({"billing_account_id": billing_account_id, "status": status})
    if issued_before is not None:
        clause, params = f"{clause} AND issued_at < ?", [*params, issued_before]
    deleted = _execute(f"DELETE FROM invoices WHERE {clause}", params)[1]
    return json.dumps({"deleted": deleted})


TOOLS = [list_billing_accounts, list_invoices, delete_invoices]
model = ChatOpenAI(model=os.environ.get("KAUDIT_MODEL", "gpt-4o-mini")).bind_tools(TOOLS)


def call_model(state: MessagesState) -> dict[str, list[object]]:
    """One model turn over the conversation so far."""
    return {"messages": [model.invoke(state["messages"])]}


graph = StateGraph(MessagesState)
graph.add_node("model", call_model)
graph.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))  # errors go to the model
graph.add_edge(START, "model")
graph.add_conditional_edges("model", tools_condition)  # tool calls go to "tools", else end
graph.add_edge("tools", "model")

if __name__ == "__main__":
    task = [
        SystemMessage(os.environ["KAUDIT_SYSTEM_PROMPT"]),
        HumanMessage(os.environ["KAUDIT_TASK_PROMPT"]),
    ]
    final = graph.compile().invoke({"messages": task}, {"recursion_limit": 40})
    print(final["messages"][-1].content)
