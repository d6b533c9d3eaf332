#!/usr/bin/env bash
# Installs the third-party MCP servers kaudit's tool-door tests audit, each in its own
# virtual environment under .venv-tools/ (docs/tool-door.md):
#  - .venv-tools/sqlite: the reference SQLite MCP server (`mcp-server-sqlite` on PyPI).
#    It is written against the 1.x `mcp` SDK (`@server.list_tools()` decorators), which
#    kaudit's own `mcp>=2.3` no longer has, so it cannot share kaudit's venv; its venv
#    pins `mcp<2`. The tests start it by path: .venv-tools/sqlite/bin/mcp-server-sqlite.
# Re-running it changes nothing that is already in place.
set -euo pipefail
cd "$(dirname "$0")"

python="${PYTHON:-python3}"
venv=.venv-tools/sqlite
if [ ! -x "$venv/bin/mcp-server-sqlite" ]; then
  echo "install-tool-servers.sh: installing mcp-server-sqlite into $venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q 'mcp-server-sqlite==2025.4.25' 'mcp>=1.6,<2'
fi
