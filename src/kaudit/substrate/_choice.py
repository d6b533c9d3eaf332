"""Which substrate a campaign runs on: `sqlite` (the default) or a `postgresql://` URL.

Substrates are named by the scheme of the choice string and found through the one
generic registry, so a package can add its own (`kaudit.substrates` entry points).
Every substrate is built from the same inputs: the world's SQLite template image
(the canonical seeded state), its tools and its volatile columns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kaudit.errors import SubstrateError
from kaudit.registry import Registry
from kaudit.substrate._protocol import Substrate
from kaudit.substrate._schema import ForeignKey
from kaudit.tools import Tool

DEFAULT_SUBSTRATE = "sqlite"


@dataclass(frozen=True)
class Blueprint:
    """What every substrate is built from; `image` is the world's SQLite template.

    `source_database` names a PostgreSQL database the world was read from (an existing
    template database): the PostgreSQL substrate then clones that database itself, on
    the same server, instead of building one from `image`, and no other substrate can
    hold the world's native column types.
    """

    name: str
    image: bytes
    tools: Mapping[str, Tool] = field(default_factory=dict)
    volatile: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source_database: str | None = None
    ownership: tuple[ForeignKey, ...] = ()
    """Foreign keys the world declares for a schema that declares none: which rows belong
    to which, for a boundary's scope (`kaudit.boundary`)."""


SubstrateFactory = Callable[[str, Blueprint], Substrate]
"""`factory(choice, blueprint)`: `choice` is the full string the user gave (URL included)."""

SUBSTRATES: Registry[SubstrateFactory] = Registry(
    "substrate",
    "kaudit.substrates",
    builtins=("kaudit.substrate._sqlite", "kaudit.postgres._entry"),
    error=SubstrateError,
)


def substrate_scheme(choice: str) -> str:
    """`sqlite` for `sqlite`, `postgresql` for `postgresql://...` (and `postgres://...`)."""
    scheme = choice.split("://", 1)[0] if "://" in choice else choice
    return "postgresql" if scheme == "postgres" else scheme


def open_substrate(choice: str, blueprint: Blueprint) -> Substrate:
    """The substrate `choice` names, over `blueprint`; an unknown scheme lists the known ones."""
    return SUBSTRATES.get(substrate_scheme(choice))(choice, blueprint)
