"""Registers the PostgreSQL substrate without importing psycopg until it is chosen."""

from __future__ import annotations

from kaudit.errors import SubstrateError
from kaudit.substrate._choice import SUBSTRATES, Blueprint
from kaudit.substrate._protocol import Substrate


@SUBSTRATES.register("postgresql")
def postgres_substrate(choice: str, blueprint: Blueprint) -> Substrate:
    """A `PostgresSubstrate` at the server `choice` names (`postgresql://user@host:port/db`)."""
    try:
        from kaudit.substrate._postgres import PostgresSubstrate
    except ModuleNotFoundError as exc:
        raise SubstrateError(
            f"the PostgreSQL substrate needs psycopg: pip install 'kaudit[postgres]' ({exc})"
        ) from None
    return PostgresSubstrate(choice, blueprint)
