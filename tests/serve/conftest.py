"""What the MCP tests share: the kaudit executable, the builtin task, a third-party server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TASK = "billing/invoice-delete-drafts"
KAUDIT = [sys.executable, "-c", "from kaudit.cli.main import main; main()"]
"""The kaudit CLI of this interpreter, wherever pip put the console script."""
EXAMPLE_AGENT = f"{sys.executable} -m kaudit.serve.example_agent --suite builtin"

REPO = Path(__file__).resolve().parents[2]
SQLITE_MCP = REPO / ".venv-tools" / "sqlite" / "bin" / "mcp-server-sqlite"
"""The reference SQLite MCP server, in its own venv (`install-tool-servers.sh`)."""
POSTGRES_MCP = REPO / ".venv-tools" / "postgres" / "bin" / "fluid-postgres-mcp"
"""A PostgreSQL MCP server from PyPI, in its own venv (`install-tool-servers.sh`)."""


def tool_server(path: Path) -> Path:
    """A third-party MCP server's executable, installed from PyPI when missing.

    `install.sh` installs it; a checkout that skipped it gets it here, once. When even
    that fails the tests skip, except in CI, where they fail.
    """
    if not path.exists():
        done = subprocess.run(
            ["bash", str(REPO / "install-tool-servers.sh")], capture_output=True, text=True
        )
        if done.returncode != 0 or not path.exists():
            message = f"cannot install {path.name}: {done.stderr[-2000:]}"
            if os.environ.get("CI"):  # any CI value, as tests/pg.py reads it
                pytest.fail(message)
            pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def sqlite_mcp_server() -> Path:
    """The reference SQLite MCP server's executable (`tool_server`)."""
    return tool_server(SQLITE_MCP)


@pytest.fixture(scope="session")
def postgres_mcp_server() -> Path:
    """The PostgreSQL MCP server's executable (`tool_server`)."""
    return tool_server(POSTGRES_MCP)
