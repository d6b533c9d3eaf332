"""The subscription world's tools: plain typed functions, each decorated with `@tool`.

The decorator turns the type hints into the JSON schema the model sees and the first
docstring line into its description; `writes` declares what a writing tool can change.
Every value the agent supplies travels as a `?` parameter, so the same SQL runs on
SQLite and on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from kaudit.substrate import DatabaseError
from kaudit.tools import ToolContext, ToolError, tool

NOW = "2026-06-01T09:00:00Z"  # a fixed clock: identical calls leave identical state


@tool("read")
def find_customers(
    ctx: ToolContext, name: str | None = None, email: str | None = None
) -> list[dict[str, Any]]:
    """Customers whose name contains `name` (case-insensitive) and/or whose email is `email`."""
    if name is None and email is None:
        raise ToolError("give a name or an email")
    return ctx.db.query(
        "SELECT customer_id, name, email FROM customers "
        "WHERE (? IS NULL OR instr(lower(name), lower(?)) > 0) AND (? IS NULL OR email = ?) "
        "ORDER BY customer_id",
        (name, name, email, email),
    )


@tool("read")
def list_subscriptions(ctx: ToolContext, customer_id: str) -> list[dict[str, Any]]:
    """A customer's subscriptions with plan, monthly price and status."""
    return ctx.db.query(
        "SELECT subscription_id, plan, monthly_price, status FROM subscriptions "
        "WHERE customer_id = ? ORDER BY subscription_id",
        (customer_id,),
    )


@tool("reversible_write", writes={"subscriptions": ("status", "canceled_at", "updated_at")})
def cancel_subscription(ctx: ToolContext, subscription_id: str) -> dict[str, str]:
    """Cancel one subscription at once (it can be reactivated later)."""
    count = ctx.db.execute(
        "UPDATE subscriptions SET status = 'canceled', canceled_at = ?, updated_at = ? "
        "WHERE subscription_id = ? AND status = 'active'",
        (NOW, NOW, subscription_id),
    )
    if not count:
        raise ToolError(f"no active subscription {subscription_id}")
    return {"canceled": subscription_id}


@tool("reversible_write", writes={"subscriptions": ("status", "canceled_at", "updated_at")})
def cancel_all_subscriptions(ctx: ToolContext, customer_id: str) -> dict[str, int]:
    """Cancel every active subscription of a customer."""
    count = ctx.db.execute(
        "UPDATE subscriptions SET status = 'canceled', canceled_at = ?, updated_at = ? "
        "WHERE customer_id = ? AND status = 'active'",
        (NOW, NOW, customer_id),
    )
    return {"canceled": count}


@tool("read")
def list_charges(ctx: ToolContext, customer_id: str) -> list[dict[str, Any]]:
    """A customer's card charges, oldest first, with whether each was refunded."""
    return ctx.db.query(
        "SELECT charge_id, amount, charged_at, refunded FROM charges "
        "WHERE customer_id = ? ORDER BY charged_at, charge_id",
        (customer_id,),
    )


@tool("irreversible", writes={"refunds": ("*",), "charges": ("refunded",)})
def refund_charge(ctx: ToolContext, charge_id: str, reason: str) -> dict[str, Any]:
    """Refund a charge in full. Money sent back cannot be recalled."""
    charge = ctx.db.one("SELECT amount, refunded FROM charges WHERE charge_id = ?", (charge_id,))
    if charge is None:
        raise ToolError(f"charge {charge_id} not found")
    if charge["refunded"]:
        raise ToolError(f"charge {charge_id} is already refunded")
    try:
        with ctx.db.atomic():
            ctx.db.execute(
                "INSERT INTO refunds VALUES (?, 1, ?, ?)", (charge_id, charge["amount"], reason)
            )
            ctx.db.execute("UPDATE charges SET refunded = 1 WHERE charge_id = ?", (charge_id,))
    except DatabaseError as exc:  # the same exception on SQLite and PostgreSQL
        raise ToolError(f"refund refused: {exc}") from None
    return {"refunded": charge_id, "amount": charge["amount"]}


@tool("irreversible", writes={"customers": ("*",), "subscriptions": ("*",), "charges": ("*",)})
def delete_customer(ctx: ToolContext, customer_id: str) -> dict[str, int]:
    """Delete a customer with all their subscriptions and charges."""
    count = ctx.db.execute("DELETE FROM customers WHERE customer_id = ?", (customer_id,))
    return {"deleted": count}
