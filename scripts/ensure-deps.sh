#!/usr/bin/env bash
# Makes sure what `npm run dev`, `npm test` and `npm run bench` need is installed, and says nothing
# when it is: the npm packages, the server binaries of the local stack (MariaDB, Redis, memcached,
# etcd) and Chromium (the GraphiQL browser test). Installs what is missing with npm and apt-get
# when it can (root); otherwise prints the command to run and fails.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

say() { echo "ensure-deps: $*" >&2; }

# --- npm packages -----------------------------------------------------------------------------
# npm rewrites node_modules/.package-lock.json on every install: it is newer than package-lock.json
# exactly when node_modules matches the lock file.
marker=node_modules/.package-lock.json
if [[ ! -d node_modules || ! -f $marker || package-lock.json -nt $marker ]]; then
  say "installing npm packages (npm ci)"
  if ! npm ci --no-audit --no-fund; then
    say "npm ci failed; trying npm install"
    npm install --no-audit --no-fund
  fi
  # npm does not rewrite its marker when nothing changed: record that node_modules is current.
  [[ -f $marker ]] && touch "$marker"
fi
# Patches to installed packages (see scripts/patch-deps.mjs); also for a node_modules installed
# before a patch was added. Quiet and quick when they are in place.
node scripts/patch-deps.mjs

# --- server binaries --------------------------------------------------------------------------
PACKAGES=(mariadb-server redis-server memcached etcd-server chromium openssl sasl2-bin)

have() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local dir
  for dir in /usr/sbin /usr/bin /usr/local/sbin /usr/local/bin /sbin /bin; do
    [[ -x $dir/$1 ]] && return 0
  done
  return 1
}

missing_binaries() {
  local b missing=()
  for b in mariadbd mariadb-install-db redis-server memcached etcd openssl saslpasswd2; do
    have "$b" || missing+=("$b")
  done
  [[ -x /usr/bin/chromium ]] || missing+=(chromium)
  echo "${missing[*]}"
}

missing=$(missing_binaries)
[[ -z $missing ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  say "missing: $missing. Install them with:"
  echo "sudo apt-get install -y ${PACKAGES[*]}"
  exit 1
fi

say "missing: $missing; installing ${PACKAGES[*]} with apt-get"
# The packages would start their own servers on the default ports (3306, 6379, 11211, 2379): not
# needed (the local stack runs its own) and costly on a small machine. policy-rc.d exiting 101 is
# Debian's way to tell maintainer scripts not to start services; put one in place for the install
# unless the machine already has one.
policy=/usr/sbin/policy-rc.d
own_policy=
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\n# Written by shardql scripts/ensure-deps.sh for one apt-get install.\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  own_policy=1
  trap 'rm -f "$policy"' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update && apt-get install -y "${PACKAGES[@]}"; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  say "apt-get failed (full log: $log); run: sudo apt-get install -y ${PACKAGES[*]}"
  exit 1
fi
rm -f "$log"
if [[ -n $own_policy ]]; then
  rm -f "$policy"
  trap - EXIT
fi

# If a service started anyway (a policy that allows it), stop it. Only through its own pid file:
# the init scripts' fallbacks (`killall mariadbd`) would also kill the local stack's servers.
stop_if_running() { # service pidfile
  local pid
  [[ -s $2 ]] || return 0
  pid=$(cat "$2" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 0
  say "stopping the system's $1 service (pid $pid): shardql runs its own"
  service "$1" stop >/dev/null 2>&1 || true
}
stop_if_running mariadb /run/mysqld/mysqld.pid
stop_if_running redis-server /run/redis/redis-server.pid
stop_if_running memcached /run/memcached.pid
stop_if_running etcd /run/etcd.pid

missing=$(missing_binaries)
if [[ -n $missing ]]; then
  say "still missing after apt-get install: $missing"
  exit 1
fi
say "installed ${PACKAGES[*]}"
