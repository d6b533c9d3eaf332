"""What the MCP tests share: the kaudit executable and the builtin task they audit."""

from __future__ import annotations

import sys
from pathlib import Path

TASK = "billing/invoice-delete-drafts"
KAUDIT = str(Path(sys.executable).with_name("kaudit"))
EXAMPLE_AGENT = f"{sys.executable} -m kaudit.serve.example_agent --suite builtin"
