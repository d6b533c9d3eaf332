#!/usr/bin/env bash
# Installs the third-party MCP servers kaudit's tool-door tests audit, each in its own
# virtual environment under .venv-tools/ (docs/tool-door.md):
#  - .venv-tools/sqlite: the reference SQLite MCP server (`mcp-server-sqlite` on PyPI).
#    It is written against the 1.x `mcp` SDK (`@server.list_tools()` decorators), which
#    kaudit's own `mcp>=2.3` no longer has, so it cannot share kaudit's venv; its venv
#    pins `mcp<2`. The tests start it by path: .venv-tools/sqlite/bin/mcp-server-sqlite.
#  - .venv-tools/postgres: a PostgreSQL MCP server (`fluid-postgres-mcp` on PyPI, a fork
#    of `postgres-mcp`, whose own release pins a pglast the registry does not have). It
#    needs Python >= 3.12, found on PATH or among pyenv's versions; without one it is
#    skipped with a message. The tests start it by path with the run's `{url}`.
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

# A Python >= 3.12 for the PostgreSQL server's venv: on PATH, else one pyenv installed.
python312() {
  local candidate root
  root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
  for candidate in python3.13 python3.12 "$root"/versions/3.1[2-9]*/bin/python3; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

venv=.venv-tools/postgres
if [ ! -x "$venv/bin/fluid-postgres-mcp" ]; then
  if newer="$(python312)"; then
    echo "install-tool-servers.sh: installing fluid-postgres-mcp into $venv"
    "$newer" -m venv "$venv"
    "$venv/bin/python" -m pip install -q 'fluid-postgres-mcp==0.1.6'
  else
    echo "install-tool-servers.sh: skipping fluid-postgres-mcp: it needs Python >= 3.12" >&2
  fi
fi
