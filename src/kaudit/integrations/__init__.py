"""Integrations with other evaluation tools: Inspect AI tasks and an Inspect log importer.

`kaudit.integrations.inspect_tasks` (the `kaudit/suite` Inspect task) needs
`kaudit[inspect]`; importing this package does not import Inspect.
"""

from kaudit.integrations._inspect_import import import_inspect_logs

__all__ = [
    "import_inspect_logs",
]
