#!/usr/bin/env bash
# Starts a local PostgreSQL for the PostgresRoomStore tests and prints its connection URL
# on standard output (everything else goes to standard error):
#
#     export INVISO_TEST_POSTGRES_URL="$(sudo scripts/start-postgres.sh)"
#
# Uses Debian's cluster tools (postgresql-common: pg_createcluster, pg_ctlcluster), which
# run the server as the `postgres` user, so it works when started as root (CI). It needs
# root (or sudo) because it changes the cluster's configuration and creates a role.
#
# What it does, each step only when needed (safe to run again while the server runs):
#   1. creates the cluster `$PG_VERSION/$PG_CLUSTER` (default: newest installed, `main`);
#   2. makes it listen on 127.0.0.1 only (a new cluster gets port `$PG_PORT`, default 5432;
#      an existing one keeps its port, and the printed URL says which);
#   3. starts it;
#   4. creates the login role `inviso` (password `inviso`) and the database `inviso_test`
#      owned by it.
#
# Install the server first if it is missing: `apt-get install postgresql`.
set -euo pipefail

PG_CLUSTER="${PG_CLUSTER:-main}"
PG_PORT="${PG_PORT:-5432}" # for a new cluster; an existing one keeps its port
DB_USER="${INVISO_TEST_DB_USER:-inviso}"
DB_PASSWORD="${INVISO_TEST_DB_PASSWORD:-inviso}"
DB_NAME="${INVISO_TEST_DB_NAME:-inviso_test}"

log() { echo "start-postgres: $*" >&2; }

if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! command -v pg_createcluster >/dev/null 2>&1; then
    log "error: Debian's PostgreSQL cluster tools are missing (apt-get install postgresql)"
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    log "error: run as root (sudo $0): the server runs as the postgres user"
    exit 1
fi

if [ -z "${PG_VERSION:-}" ]; then
    PG_VERSION="$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)"
fi
if [ -z "$PG_VERSION" ] || [ ! -x "/usr/lib/postgresql/$PG_VERSION/bin/postgres" ]; then
    log "error: no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)"
    exit 1
fi

# The socket directory lives on a tmpfs on most machines; the server wants it to exist.
install -d -o postgres -g postgres -m 2775 /var/run/postgresql

cluster_line() { pg_lsclusters --no-header 2>/dev/null | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1 == v && $2 == c'; }

if [ -z "$(cluster_line)" ]; then
    log "creating cluster $PG_VERSION/$PG_CLUSTER on port $PG_PORT"
    pg_createcluster --port "$PG_PORT" "$PG_VERSION" "$PG_CLUSTER" >&2
fi

# The port the cluster really uses (an existing cluster may have been made on another).
port="$(cluster_line | awk '{print $3}')"

# Loopback only: a drop-in in the cluster's conf.d (Debian's postgresql.conf includes it).
# A change needs a restart of a running server.
conf_dir="/etc/postgresql/$PG_VERSION/$PG_CLUSTER/conf.d"
drop_in="$conf_dir/inviso-loopback.conf"
wanted="listen_addresses = '127.0.0.1'"
changed=0
if [ "$(cat "$drop_in" 2>/dev/null || true)" != "$wanted" ]; then
    install -d -o postgres -g postgres -m 0755 "$conf_dir"
    printf '%s\n' "$wanted" >"$drop_in"
    chown postgres:postgres "$drop_in"
    changed=1
fi

status="$(cluster_line | awk '{print $4}')"
if [ "$status" = "online" ]; then
    if [ "$changed" -eq 1 ]; then
        log "restarting cluster $PG_VERSION/$PG_CLUSTER (now listening on 127.0.0.1 only)"
        pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" restart >&2
    else
        log "cluster $PG_VERSION/$PG_CLUSTER already running on port $port"
    fi
else
    log "starting cluster $PG_VERSION/$PG_CLUSTER on 127.0.0.1:$port"
    pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start >&2
fi

# Wait until it accepts connections (pg_ctlcluster waits too; this covers a restart race).
for _ in $(seq 1 30); do
    if runuser -u postgres -- "/usr/lib/postgresql/$PG_VERSION/bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
        break
    fi
    sleep 1
done
runuser -u postgres -- "/usr/lib/postgresql/$PG_VERSION/bin/pg_isready" -h 127.0.0.1 -p "$port" >&2

# As the postgres superuser over the Unix socket (peer authentication). psql variables
# (:'name') quote the values, so the names and password are never spliced into SQL text.
psql_admin() {
    runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$port" -d postgres \
        -v db_user="$DB_USER" -v db_password="$DB_PASSWORD" -v db_name="$DB_NAME" "$@"
}

psql_admin >&2 <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'db_user')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'db_user') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'db_user', :'db_password') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db_name', :'db_user')
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db_name') \gexec
SQL

log "ready: database $DB_NAME for role $DB_USER on 127.0.0.1:$port"
echo "postgres://$DB_USER:$DB_PASSWORD@127.0.0.1:$port/$DB_NAME"
