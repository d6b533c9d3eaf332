"""The PostgreSQL substrate: run databases cloned from a template, pools, owner tags, capture.

Choose it with `--substrate postgresql://...` (or `open_substrate(url, blueprint)`): the
substrate registry finds it here. Importing this package does not import psycopg; the
driver is loaded when a PostgreSQL substrate is opened, so SQLite users need none. Its
sandboxes bring the identity boundary on PostgreSQL (roles, row-level security:
`_guard`), which `kaudit.boundary` asks them for as it asks any substrate's.
"""

from kaudit.postgres._entry import postgres_world_image
from kaudit.postgres._prune import prune_postgres
from kaudit.postgres._pruned import Pruned

__all__ = ["Pruned", "postgres_world_image", "prune_postgres"]
