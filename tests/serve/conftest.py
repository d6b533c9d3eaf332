"""What the MCP tests share: the kaudit executable and the builtin task they audit."""

from __future__ import annotations

import sys

TASK = "billing/invoice-delete-drafts"
KAUDIT = [sys.executable, "-c", "from kaudit.cli.main import main; main()"]
"""The kaudit CLI of this interpreter, wherever pip put the console script."""
EXAMPLE_AGENT = f"{sys.executable} -m kaudit.serve.example_agent --suite builtin"
