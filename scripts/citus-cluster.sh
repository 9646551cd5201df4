#!/usr/bin/env bash
# A Citus cluster on this machine: a coordinator and workers as extra PostgreSQL
# clusters (initdb into a directory, private ports), for the Citus tests and
# benchmarks. Builds and installs the extension from the vendored tarball when
# the server pg_config names lacks it.
#
#   scripts/citus-cluster.sh install             build (cached) and install Citus if missing
#   scripts/citus-cluster.sh start DIR [N]       coordinator + N workers (default 2) under DIR
#   scripts/citus-cluster.sh add-worker DIR      one more worker, added to every Citus database
#   scripts/citus-cluster.sh create-database DIR NAME
#                                                NAME on every node, with the extension and the
#                                                workers registered on the coordinator
#   scripts/citus-cluster.sh stop DIR            stop every node and remove DIR
#
# DIR/env holds CITUS_COORDINATOR_PORT and CITUS_WORKER_PORTS (space-separated).
set -euo pipefail

CITUS_VERSION=13.2.2
HERE=$(cd "$(dirname "$0")" && pwd)
# The tarball is in shared/vendor beside the checkout; a clone elsewhere on the machine finds the team's copy.
VENDOR=${CITUS_VENDOR_DIR:-}
if [ -z "$VENDOR" ]; then
  for candidate in "$HERE/../../shared/vendor" /work/shared/vendor; do
    if [ -d "$candidate" ]; then VENDOR=$candidate; break; fi
  done
  VENDOR=${VENDOR:-$HERE/../../shared/vendor}
fi
CACHE=${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/session-store-ci

fail() { echo "citus-cluster: $*" >&2; exit 1; }

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

bindir() { pg_config --bindir; }

installed() {
  local control
  control="$(pg_config --sharedir)/extension/citus.control"
  [ -f "$(pg_config --pkglibdir)/citus.so" ] && [ -f "$control" ] \
    && grep -q "default_version = '${CITUS_VERSION%.*}-" "$control"
}

# The -dev packages the build needs, installed only when one is missing.
ensure_build_packages() {
  local packages=(postgresql-server-dev-15 libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev
    libselinux1-dev libxslt1-dev libpam0g-dev libreadline-dev) missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  [ "$(id -u)" = 0 ] || fail "missing build packages (${missing[*]}); install them as root"
  echo "--- installing ${missing[*]}" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
}

# Builds once per PostgreSQL server version in the cache, in place (configure records the tree's path, so a
# moved tree cannot install), and installs from there; `.built` marks a finished build. flock: one build at a time.
install_citus() {
  installed && return
  local server tree
  server=$(pg_config --version | awk '{print $2}')
  tree=$CACHE/citus-$CITUS_VERSION-pg$server
  mkdir -p "$CACHE"
  exec 9>"$CACHE/citus.lock"
  flock 9
  if [ ! -f "$tree/.built" ]; then
    [ -f "$VENDOR/citus-$CITUS_VERSION.tar.gz" ] || fail "no $VENDOR/citus-$CITUS_VERSION.tar.gz to build Citus from"
    ensure_build_packages
    echo "--- building Citus $CITUS_VERSION for PostgreSQL $server (about a minute on 2 idle cores) in $tree" >&2
    rm -rf "$tree"
    mkdir -p "$tree"
    tar xzf "$VENDOR/citus-$CITUS_VERSION.tar.gz" -C "$tree" --strip-components=1
    (
      cd "$tree"
      patch -p1 -s < "$VENDOR/citus-$CITUS_VERSION-pg15.20.patch"
      ./configure >"$tree/build.log" 2>&1 && make -j"$(nproc)" >>"$tree/build.log" 2>&1
    ) || { tail -n 30 "$tree/build.log" >&2; fail "Citus $CITUS_VERSION did not build (log above, whole log in $tree/build.log)"; }
    touch "$tree/.built"
  fi
  echo "--- installing Citus $CITUS_VERSION from $tree" >&2
  make -C "$tree" install >"$tree/install.log" 2>&1 || { tail -n 30 "$tree/install.log" >&2; fail "Citus $CITUS_VERSION did not install (log above)"; }
  installed || fail "Citus installed, but $(pg_config --pkglibdir)/citus.so or its control file is missing"
  exec 9>&-
}

free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 20000))
    if ! ss -ltnH "sport = :$port" | grep -q .; then echo "$port"; return; fi
  done
  fail "no free port"
}

# start_node DIR NAME: a fresh cluster with Citus preloaded; prints its port.
start_node() {
  local dir=$1 name=$2 port data
  port=$(free_port)
  data=$dir/$name
  as_postgres "$(bindir)/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
  cat >>"$data/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_preload_libraries = 'citus'
max_connections = 300
# A test cluster: durability against an OS crash is not what runs here.
fsync = off
full_page_writes = off
synchronous_commit = off
# Shard moves use logical replication.
wal_level = logical
max_wal_senders = 20
max_replication_slots = 20
EOF
  as_postgres "$(bindir)/pg_ctl" -D "$data" -l "$dir/$name.log" -w -t 60 start >/dev/null \
    || { cat "$dir/$name.log" >&2; fail "$name did not start"; }
  echo "$port"
}

psql_at() { local port=$1 db=$2; shift 2; psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d "$db" "$@"; }

# prepare_node_database PORT DB: DB on that node, with the extension.
prepare_node_database() {
  local port=$1 db=$2
  if [ "$(psql_at "$port" postgres -Atc "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 0 ]; then
    psql_at "$port" postgres -c "CREATE DATABASE \"$db\""
  fi
  psql_at "$port" "$db" -c 'CREATE EXTENSION IF NOT EXISTS citus'
}

load_env() {
  [ -f "$1/env" ] || fail "$1 holds no cluster (no $1/env)"
  # shellcheck disable=SC1091
  . "$1/env"
}

citus_databases() {
  psql_at "$CITUS_COORDINATOR_PORT" postgres -Atc \
    "SELECT datname FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1')" |
    while read -r db; do
      [ "$(psql_at "$CITUS_COORDINATOR_PORT" "$db" -Atc "SELECT count(*) FROM pg_extension WHERE extname = 'citus'")" = 1 ] && echo "$db"
    done
}

cmd=${1:-}
case "$cmd" in
  install)
    install_citus
    ;;
  start)
    dir=${2:?usage: start DIR [WORKERS]}
    workers=${3:-2}
    install_citus
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    coordinator=$(start_node "$dir" coordinator)
    ports=""
    for i in $(seq 1 "$workers"); do ports="$ports $(start_node "$dir" "worker$i")"; done
    printf 'CITUS_COORDINATOR_PORT=%s\nCITUS_WORKER_PORTS="%s"\n' "$coordinator" "${ports# }" >"$dir/env"
    cat "$dir/env"
    ;;
  add-worker)
    dir=${2:?usage: add-worker DIR}
    load_env "$dir"
    n=$(($(wc -w <<<"$CITUS_WORKER_PORTS") + 1))
    port=$(start_node "$dir" "worker$n")
    for db in $(citus_databases); do
      prepare_node_database "$port" "$db"
      psql_at "$CITUS_COORDINATOR_PORT" "$db" -Atc "SELECT citus_add_node('127.0.0.1', $port)" >/dev/null
    done
    printf 'CITUS_COORDINATOR_PORT=%s\nCITUS_WORKER_PORTS="%s"\n' "$CITUS_COORDINATOR_PORT" "$CITUS_WORKER_PORTS $port" >"$dir/env"
    echo "$port"
    ;;
  create-database)
    dir=${2:?usage: create-database DIR NAME}
    db=${3:?usage: create-database DIR NAME}
    load_env "$dir"
    for port in $CITUS_WORKER_PORTS; do prepare_node_database "$port" "$db"; done
    prepare_node_database "$CITUS_COORDINATOR_PORT" "$db"
    psql_at "$CITUS_COORDINATOR_PORT" "$db" -Atc "SELECT citus_set_coordinator_host('127.0.0.1', $CITUS_COORDINATOR_PORT)" >/dev/null
    for port in $CITUS_WORKER_PORTS; do
      psql_at "$CITUS_COORDINATOR_PORT" "$db" -Atc "SELECT citus_add_node('127.0.0.1', $port)" >/dev/null
    done
    ;;
  stop)
    dir=${2:?usage: stop DIR}
    for data in "$dir"/coordinator "$dir"/worker*; do
      [ -f "$data/PG_VERSION" ] && as_postgres "$(bindir)/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    done
    rm -rf "$dir"
    ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
