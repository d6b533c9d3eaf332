#!/usr/bin/env bash
# Installs what kaudit and its tests need on a Debian or Ubuntu machine, and says what it
# changes. Re-running it changes nothing that is already in place.
#  1. As root, the missing system packages, without their recommends: sqldiff
#     (sqlite3-tools), Chromium (the HTML report's browser test), a PostgreSQL server,
#     python3-venv. Not root: it lists what is missing and goes on.
#  2. A PostgreSQL server on 127.0.0.1:5432 where user postgres connects without a password
#     (the postgres tests). A server already answering that way is left as it is. Otherwise,
#     as root, it creates its own cluster named `kaudit` (trust for host connections is
#     written by initdb into that cluster's pg_hba.conf only); no other cluster's
#     configuration is ever edited.
#  3. A virtual environment .venv with kaudit and every extra (`.[dev]`): a stock Debian or
#     Ubuntu python3 refuses `pip install` outside a venv (PEP 668); then the local model
#     (./install-local-model.sh: SmolLM2 on xllamacpp, prebuilt wheels).
#  4. The third-party MCP servers the tool-door tests audit, each in its own venv under
#     .venv-tools/ (install-tool-servers.sh; docs/tool-door.md).
# Then `. .venv/bin/activate`.
set -euo pipefail
cd "$(dirname "$0")"
say() { echo "install.sh: $*"; }
root() { [ "$(id -u)" = 0 ]; }

# 1. System packages.
need=()
command -v sqldiff >/dev/null || need+=(sqlite3-tools)
command -v chromium >/dev/null || need+=(chromium)
command -v pg_ctlcluster >/dev/null || need+=(postgresql)
python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
installed_postgresql=no
if [ ${#need[@]} -gt 0 ]; then
  if root; then
    say "installing system packages: ${need[*]}"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
    [[ " ${need[*]} " == *" postgresql "* ]] && installed_postgresql=yes
  else
    say "missing system packages: ${need[*]} (run as root, or apt-get install them)" >&2
  fi
fi

# 2. PostgreSQL for the postgres tests.
pg_trusts() { psql -h 127.0.0.1 -p 5432 -U postgres -w -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1; }
# Whether pg_lsclusters lists a cluster whose column $1 is $2 (exit status only, no pipe).
has_cluster() { pg_lsclusters -h | awk -v col="$1" -v want="$2" '$col == want {found = 1} END {exit !found}'; }
if pg_trusts; then
  say "PostgreSQL on 127.0.0.1:5432 already lets user postgres in; left as it is"
elif command -v pg_ctlcluster >/dev/null; then
  version=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$version" ]; then
    say "no PostgreSQL server binaries under /usr/lib/postgresql; the postgres tests skip" >&2
  elif ! root; then
    say "no PostgreSQL on 127.0.0.1:5432 that user postgres reaches without a password;" \
      "the postgres tests skip (set KAUDIT_TEST_PG to another server's URL)" >&2
  elif has_cluster 2 kaudit; then
    if ! pg_ctlcluster "$version" kaudit status >/dev/null 2>&1; then
      say "starting the PostgreSQL cluster $version/kaudit this script created earlier"
      pg_ctlcluster --skip-systemctl-redirect "$version" kaudit start
    fi
  else
    if [ "$installed_postgresql" = yes ] && has_cluster 2 main; then
      # The package created an empty `main` cluster on 5432 a moment ago, in this run.
      say "dropping the empty PostgreSQL cluster $version/main the package just created"
      pg_dropcluster --stop "$version" main
    fi
    if has_cluster 3 5432; then
      say "a PostgreSQL cluster this script did not create holds port 5432 and asks user" \
        "postgres for a password; it is left untouched and the postgres tests skip" \
        "(set KAUDIT_TEST_PG to a URL that needs none)" >&2
    else
      say "creating PostgreSQL cluster $version/kaudit on 127.0.0.1:5432, trust for host" \
        "connections (its own pg_hba.conf), peer for local sockets"
      pg_createcluster --port 5432 "$version" kaudit -- --auth-host=trust --auth-local=peer
      pg_ctlcluster --skip-systemctl-redirect "$version" kaudit start
    fi
  fi
fi

# 3. The virtual environment.
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
# The real local model the real-model tests audit (prebuilt wheels: seconds, no compiler).
./install-local-model.sh .venv
# The third-party MCP servers the tool-door tests audit, each in its own venv.
./install-tool-servers.sh
say "done: . .venv/bin/activate, then kaudit --help"
