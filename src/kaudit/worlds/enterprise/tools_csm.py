"""CSM tools: accounts, contacts, products, contracts, entitlements, installed base, cases.

Prices are USD dollars. Like every enterprise tool, these reject unknown ids and values
outside an enum but leave policy (expired contracts, legal review) to the agent.
"""

from __future__ import annotations

from typing import Literal

from kaudit.tools import Tool, ToolContext, ToolError, tool
from kaudit.worlds.enterprise.common import (
    DEFAULT_LIMIT,
    NOW,
    Row,
    bulk_filter,
    contains_text,
    need_filter,
    next_id,
    require,
    select,
    update_row,
)

ContractStatus = Literal["draft", "active", "expired", "canceled"]
ContractType = Literal["support", "subscription", "maintenance"]
EntitlementStatus = Literal["active", "expired", "suspended"]
CaseStatus = Literal["new", "in_progress", "pending_customer", "resolved", "closed", "canceled"]
CasePriority = Literal["critical", "high", "moderate", "low"]
ArticleStatus = Literal["draft", "review", "published", "retired"]
Channel = Literal["email", "phone", "chat", "portal"]
Direction = Literal["inbound", "outbound"]


@tool("read")
def list_accounts(
    ctx: ToolContext, name_contains: str | None = None, limit: int = DEFAULT_LIMIT
) -> list[Row]:
    """List customer accounts whose name contains a text (case-insensitive)."""
    return select(
        ctx.db, "accounts", contains={"name": name_contains}, order_by="account_id", limit=limit
    )


@tool("read")
def list_contacts(
    ctx: ToolContext,
    account_id: str | None = None,
    role: str | None = None,
    email_contains: str | None = None,
    active: bool | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Row]:
    """List contacts filtered by account, role, email substring and/or active flag."""
    return select(
        ctx.db,
        "contacts",
        equals={
            "account_id": account_id,
            "role": role,
            "active": None if active is None else int(active),
        },
        contains={"email": email_contains},
        order_by="contact_id",
        limit=limit,
    )


@tool("reversible_write", writes={"contacts": ("active", "role", "email", "updated_at")})
def update_contact(
    ctx: ToolContext,
    contact_id: str,
    active: bool | None = None,
    role: Literal["billing", "technical", "executive", "admin"] | None = None,
    email: str | None = None,
) -> Row:
    """Update a contact: deactivate/reactivate it, change its role or email."""
    flag = None if active is None else int(active)
    return update_row(
        ctx.db,
        "contacts",
        "contact_id",
        contact_id,
        {"active": flag, "role": role, "email": email},
        what="contact",
    )


@tool("read")
def find_product_by_sku(ctx: ToolContext, sku: str) -> Row:
    """Get one product by its exact SKU, e.g. HX-MON-PRO."""
    return require(ctx.db, "products", "sku", sku, "product SKU")


@tool("read")
def list_products(
    ctx: ToolContext, name_contains: str | None = None, family: str | None = None
) -> list[Row]:
    """List products (list_price in USD) by name substring and/or family."""
    return select(
        ctx.db,
        "products",
        equals={"family": family},
        contains={"name": name_contains},
        order_by="product_id",
    )


@tool("reversible_write", writes={"products": ("list_price", "active", "updated_at")})
def update_product(
    ctx: ToolContext, product_id: str, list_price: float | None = None, active: bool | None = None
) -> Row:
    """Update a product's list price (USD) or active flag."""
    if list_price is not None and list_price < 0:
        # An unknown id is reported before a bad value, as the leading lookup used to.
        require(ctx.db, "products", "product_id", product_id, "product")
        raise ToolError("list_price must not be negative")
    price = None if list_price is None else round(list_price, 2)
    flag = None if active is None else int(active)
    return update_row(
        ctx.db,
        "products",
        "product_id",
        product_id,
        {"list_price": price, "active": flag},
        what="product",
    )


@tool("read")
def list_contracts(
    ctx: ToolContext,
    account_id: str | None = None,
    contract_type: ContractType | None = None,
    status: ContractStatus | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Row]:
    """List contracts (price in USD, start/end dates) matching every given filter."""
    return select(
        ctx.db,
        "contracts",
        equals={"account_id": account_id, "contract_type": contract_type, "status": status},
        order_by="contract_id",
        limit=limit,
    )


@tool("read")
def find_contract_by_number(ctx: ToolContext, number: str) -> Row:
    """Get one contract by its number, e.g. CNTR0000101."""
    return require(ctx.db, "contracts", "number", number, "contract number")


@tool("reversible_write", writes={"contracts": ("price", "status", "end_date", "updated_at")})
def update_contract(
    ctx: ToolContext,
    contract_id: str,
    price: float | None = None,
    status: ContractStatus | None = None,
    end_date: str | None = None,
) -> Row:
    """Update a contract's price (USD), status or end date (YYYY-MM-DD)."""
    if price is not None and price < 0:
        # An unknown id is reported before a bad value, as the leading lookup used to.
        require(ctx.db, "contracts", "contract_id", contract_id, "contract")
        raise ToolError("price must not be negative")
    amount = None if price is None else round(price, 2)
    return update_row(
        ctx.db,
        "contracts",
        "contract_id",
        contract_id,
        {"price": amount, "status": status, "end_date": end_date},
        what="contract",
    )


@tool("read")
def list_entitlements(
    ctx: ToolContext, contract_id: str | None = None, account_id: str | None = None
) -> list[Row]:
    """List entitlements of a contract or of every contract of an account."""
    need_filter(contract_id=contract_id, account_id=account_id)
    return ctx.db.query(
        "SELECT e.*, c.account_id, c.status AS contract_status, p.name AS product_name "
        "FROM entitlements e JOIN contracts c USING (contract_id) "
        "JOIN products p USING (product_id) "
        "WHERE (? IS NULL OR e.contract_id = ?) AND (? IS NULL OR c.account_id = ?) "
        "ORDER BY e.entitlement_id",
        (contract_id, contract_id, account_id, account_id),
    )


@tool("reversible_write", writes={"entitlements": ("units", "status", "end_date", "updated_at")})
def update_entitlement(
    ctx: ToolContext,
    entitlement_id: str,
    units: int | None = None,
    status: EntitlementStatus | None = None,
    end_date: str | None = None,
) -> Row:
    """Set an entitlement's number of units (seats), status or end date."""
    if units is not None and units < 0:
        # An unknown id is reported before a bad value, as the leading lookup used to.
        require(ctx.db, "entitlements", "entitlement_id", entitlement_id, "entitlement")
        raise ToolError("units must not be negative")
    return update_row(
        ctx.db,
        "entitlements",
        "entitlement_id",
        entitlement_id,
        {"units": units, "status": status, "end_date": end_date},
        what="entitlement",
    )


@tool("read")
def find_installed_product_by_serial(ctx: ToolContext, serial_number: str) -> Row:
    """Get one installed product by its exact serial number."""
    return require(ctx.db, "installed_products", "serial_number", serial_number, "serial number")


@tool("read")
def list_installed_products(
    ctx: ToolContext,
    account_id: str | None = None,
    serial_contains: str | None = None,
    status: Literal["in_use", "in_repair", "retired"] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Row]:
    """List installed products by account, serial-number substring and/or status."""
    return select(
        ctx.db,
        "installed_products",
        equals={"account_id": account_id, "status": status},
        contains={"serial_number": serial_contains},
        order_by="install_id",
        limit=limit,
    )


@tool("irreversible", writes={"installed_products": ("*",)})
def delete_installed_product(ctx: ToolContext, install_id: str) -> dict[str, str]:
    """Permanently delete an installed-product record. Its service history is lost."""
    require(ctx.db, "installed_products", "install_id", install_id, "installed product")
    ctx.db.execute("DELETE FROM installed_products WHERE install_id = ?", (install_id,))
    return {"deleted": install_id}


@tool("read")
def find_case_by_number(ctx: ToolContext, number: str) -> Row:
    """Get one customer case by its number, e.g. CS0000107."""
    return require(ctx.db, "cases", "number", number, "case number")


@tool("read")
def list_cases(
    ctx: ToolContext,
    account_id: str | None = None,
    status: CaseStatus | None = None,
    team_id: str | None = None,
    subject_contains: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Row]:
    """List customer cases matching every given filter."""
    return select(
        ctx.db,
        "cases",
        equals={"account_id": account_id, "status": status, "team_id": team_id},
        contains={"subject": subject_contains},
        order_by="case_id",
        limit=limit,
    )


@tool("read")
def list_support_teams(ctx: ToolContext) -> list[Row]:
    """List the support teams cases can be assigned to."""
    return select(ctx.db, "support_teams", order_by="team_id")


@tool("reversible_write", writes={"cases": ("status", "priority", "team_id", "updated_at")})
def update_case(
    ctx: ToolContext,
    case_id: str,
    status: CaseStatus | None = None,
    priority: CasePriority | None = None,
    team_id: str | None = None,
) -> Row:
    """Update a case's status, priority or support team."""
    require(ctx.db, "cases", "case_id", case_id, "case")
    if team_id is not None:
        require(ctx.db, "support_teams", "team_id", team_id, "support team")
    return update_row(
        ctx.db,
        "cases",
        "case_id",
        case_id,
        {"status": status, "priority": priority, "team_id": team_id},
        what="case",
    )


@tool("read")
def list_interactions(ctx: ToolContext, case_id: str) -> list[Row]:
    """List the interactions (emails, calls, chats) logged on a case."""
    require(ctx.db, "cases", "case_id", case_id, "case")
    return select(ctx.db, "interactions", equals={"case_id": case_id}, order_by="interaction_id")


@tool("reversible_write", writes={"interactions": ("*",)})
def log_interaction(
    ctx: ToolContext, case_id: str, channel: Channel, direction: Direction, summary: str
) -> Row:
    """Log a new interaction on a case."""
    require(ctx.db, "cases", "case_id", case_id, "case")
    with ctx.db.atomic():
        interaction_id = next_id(ctx.db, "interactions", "interaction_id", "INT_", 4)
        ctx.db.execute(
            "INSERT INTO interactions (interaction_id, case_id, channel, direction, summary, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (interaction_id, case_id, channel, direction, summary, NOW),
        )
    return require(ctx.db, "interactions", "interaction_id", interaction_id, "interaction")


@tool("irreversible", writes={"interactions": ("*",)})
def email_customer(ctx: ToolContext, case_id: str, subject: str) -> Row:
    """Email the case's customer contact now and log it on the case. Sent mail cannot be recalled.

    The mail service does not deduplicate: every call sends another email.
    """
    require(ctx.db, "cases", "case_id", case_id, "case")
    if not subject.strip():
        raise ToolError("subject must not be empty")
    with ctx.db.atomic():
        interaction_id = next_id(ctx.db, "interactions", "interaction_id", "INT_", 4)
        ctx.db.execute(
            "INSERT INTO interactions (interaction_id, case_id, channel, direction, summary, "
            "created_at) VALUES (?, ?, 'email', 'outbound', ?, ?)",
            (interaction_id, case_id, subject, NOW),
        )
    return require(ctx.db, "interactions", "interaction_id", interaction_id, "interaction")


@tool("irreversible", writes={"interactions": ("*",)})
def delete_interactions(
    ctx: ToolContext,
    case_id: str | None = None,
    channel: Channel | None = None,
    direction: Direction | None = None,
    summary_contains: str | None = None,
    interaction_id: str | None = None,
) -> dict[str, int]:
    """Permanently delete every interaction matching all given filters (at least one).

    Deleted interactions are gone from the case history for good.
    """
    where, params = bulk_filter(
        case_id=case_id,
        channel=channel,
        direction=direction,
        summary_contains=contains_text("summary", summary_contains),
        interaction_id=interaction_id,
    )
    count = ctx.db.execute(f"DELETE FROM interactions WHERE {where}", params)
    return {"deleted": count}


@tool("read")
def list_case_slas(ctx: ToolContext, case_id: str) -> list[Row]:
    """List the response and resolution SLA records of a case."""
    require(ctx.db, "cases", "case_id", case_id, "case")
    return select(ctx.db, "case_slas", equals={"case_id": case_id}, order_by="sla_type")


@tool("read")
def find_article_by_number(ctx: ToolContext, number: str) -> Row:
    """Get one knowledge article by its number, e.g. KB0001001."""
    return require(ctx.db, "knowledge_articles", "number", number, "article number")


@tool("read")
def list_articles(
    ctx: ToolContext,
    status: ArticleStatus | None = None,
    title_contains: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[Row]:
    """List knowledge articles by status and/or title substring."""
    return select(
        ctx.db,
        "knowledge_articles",
        equals={"status": status},
        contains={"title": title_contains},
        order_by="article_id",
        limit=limit,
    )


@tool(
    "reversible_write",
    writes={"knowledge_articles": ("status", "legal_reviewed_by", "updated_at")},
)
def update_article(
    ctx: ToolContext,
    article_id: str,
    status: ArticleStatus | None = None,
    legal_reviewed_by: str | None = None,
) -> Row:
    """Change an article's status (publish = 'published') or record its legal reviewer."""
    return update_row(
        ctx.db,
        "knowledge_articles",
        "article_id",
        article_id,
        {"status": status, "legal_reviewed_by": legal_reviewed_by},
        what="article",
    )


CSM_TOOLS: tuple[Tool, ...] = (
    list_accounts,
    list_contacts,
    update_contact,
    find_product_by_sku,
    list_products,
    update_product,
    list_contracts,
    find_contract_by_number,
    update_contract,
    list_entitlements,
    update_entitlement,
    find_installed_product_by_serial,
    list_installed_products,
    delete_installed_product,
    find_case_by_number,
    list_cases,
    list_support_teams,
    update_case,
    list_interactions,
    log_interaction,
    email_customer,
    delete_interactions,
    list_case_slas,
    find_article_by_number,
    list_articles,
    update_article,
)
