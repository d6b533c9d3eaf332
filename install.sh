#!/usr/bin/env bash
# Installs everything kaudit and its tests need, on a fresh Debian or Ubuntu machine:
#  - the system packages the tests use, when missing (as root): sqldiff (sqlite3-tools),
#    Chromium (the HTML report test), a PostgreSQL server on 127.0.0.1:5432 (trust for
#    local TCP), python3-venv;
#  - a fresh virtual environment .venv holding kaudit with every extra (`.[dev]`): a stock
#    Debian or Ubuntu python3 refuses `pip install` outside a venv (PEP 668).
# Then `. .venv/bin/activate`. Re-running it is harmless.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v sqldiff >/dev/null || need+=(sqlite3-tools)
command -v chromium >/dev/null || need+=(chromium)
command -v pg_ctlcluster >/dev/null || need+=(postgresql)
python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
  else
    echo "install.sh: missing system packages: ${need[*]} (run as root, or apt-get install them)" >&2
  fi
fi

# The PostgreSQL tests need a server on 127.0.0.1:5432 with user postgres and trust auth.
if command -v pg_ctlcluster >/dev/null && [ "$(id -u)" = 0 ]; then
  for hba in /etc/postgresql/*/main/pg_hba.conf; do
    [ -f "$hba" ] && sed -i -E 's/^(host\s+all\s+all\s+127\.0\.0\.1\/32\s+)\S+/\1trust/' "$hba"
  done
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
  fi
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
# The real local model the real-model tests audit (a one-time source build, then cached).
./install-local-model.sh .venv
echo "installed: . .venv/bin/activate, then kaudit --help"
