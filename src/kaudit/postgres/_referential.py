"""What a write needs beyond its own table: the rights its foreign keys' checks and actions use.

SQLite's authorizer sees the programs its foreign keys add to a statement, so a table
grant there covers them: deleting a parent needs `read` on every child table (the check)
and `delete` or `update` on those its ON DELETE actions change, recursively; changing a
key needs the same for ON UPDATE; inserting, deleting or re-pointing a child needs
`read` on its parent (SQLite compiles the parent lookup even where it never runs), and
inserting into a parent needs `read` on every child: a table with triggers, as every
sandbox table has (change capture), makes SQLite compile a scan of the children for each
INSERT, which a deferred violation could need. PostgreSQL runs the same checks and
actions as the table owner, so the PostgreSQL boundary refuses, from these lists, each
statement SQLite's authorizer would refuse; statically, as SQLite does: whether or not a
row would be touched.

The other insert forms are these lists combined: an UPSERT (`ON CONFLICT DO UPDATE SET
columns`) needs the insert's, then `update` on the table and the update's, which is what
PostgreSQL's INSERT and UPDATE OF statement triggers together check for it; SQLite's
`INSERT OR REPLACE` needs the insert's and the delete's (PostgreSQL has no such
statement). Each list is in the order SQLite's authorizer asks, given the foreign keys
newest first (its own order), so a statement lacking several rights is refused for the
same first one on both substrates.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kaudit.spec import TableOp
from kaudit.substrate import ForeignKey

__all__ = ["ForeignKey", "Need", "delete_needs", "insert_needs", "update_needs"]

Need = tuple[TableOp, str]
"""(operation, table) a statement needs the identity to be granted."""


def delete_needs(table: str, fks: Iterable[ForeignKey]) -> list[Need]:
    """What `DELETE FROM table` needs: its parents' and children's checks, then actions."""
    return list(dict.fromkeys(_Walk(fks).deleting(table)))


def update_needs(table: str, columns: set[str], fks: Iterable[ForeignKey]) -> list[Need]:
    """What an UPDATE of `columns` of `table` needs through its foreign keys."""
    return list(dict.fromkeys(_Walk(fks).updating(table, columns)))


def insert_needs(table: str, fks: Iterable[ForeignKey]) -> list[Need]:
    """What `INSERT INTO table` needs: `read` on each parent it references, then each child."""
    fks = tuple(fks)
    parents: list[Need] = [("read", fk.parent) for fk in fks if fk.child == table]
    children: list[Need] = [("read", fk.child) for fk in fks if fk.parent == table]
    return list(dict.fromkeys(parents + children))


class _Walk:
    """One walk down the actions a statement sets off; a cycle of keys is walked once."""

    def __init__(self, fks: Iterable[ForeignKey]) -> None:
        self._fks = tuple(fks)
        self._seen: set[tuple[str, str, frozenset[str]]] = set()

    def _first_visit(self, event: str, table: str, columns: set[str]) -> bool:
        marker = (event, table, frozenset(columns))
        if marker in self._seen:
            return False
        self._seen.add(marker)
        return True

    def deleting(self, table: str) -> Iterator[Need]:
        if not self._first_visit("delete", table, set()):
            return
        yield from (("read", fk.parent) for fk in self._fks if fk.child == table)
        children = [fk for fk in self._fks if fk.parent == table]
        yield from (("read", fk.child) for fk in children)
        for fk in children:
            if fk.on_delete == "cascade":
                yield ("delete", fk.child)
                yield from self.deleting(fk.child)
            elif fk.on_delete != "none":
                yield ("update", fk.child)
                yield from self.updating(fk.child, set(fk.child_columns))

    def updating(self, table: str, columns: set[str]) -> Iterator[Need]:
        if not self._first_visit("update", table, columns):
            return
        children = [f for f in self._fks if f.parent == table and columns & set(f.parent_columns)]
        yield from (("read", fk.child) for fk in children)
        for fk in children:
            if fk.on_update != "none":
                yield ("update", fk.child)
                yield from self.updating(fk.child, set(fk.child_columns))
        parents = [f for f in self._fks if f.child == table and columns & set(f.child_columns)]
        yield from (("read", fk.parent) for fk in parents)
