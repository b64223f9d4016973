#!/bin/bash
# First-start setup of every shardql MariaDB container, primary or replica. The official image's
# entrypoint runs the files of /docker-entrypoint-initdb.d once, on an empty data directory, while
# its temporary server (socket only) is up. A shell script rather than a .sql file because the
# passwords come from the environment.
#
#   SHARDQL_MYSQL_USER / SHARDQL_MYSQL_PASSWORD                the gateway's account
#   SHARDQL_MYSQL_ADMIN_USER / SHARDQL_MYSQL_ADMIN_PASSWORD    operations (promote, fence, move); optional
#   SHARDQL_REPLICATION_USER / SHARDQL_REPLICATION_PASSWORD    the replication account
#
# Both accounts are created with the binlog off, on every instance (as the local stack does): a
# replica has its own copy instead of replaying the primary's, which would collide, and any
# instance can be promoted. (That is why primaries are not given the image's
# MARIADB_REPLICATION_USER: the image would create that account with the binlog on, and a replica
# replaying its CREATE USER next to its own copy would stop with error 1396.) The image points
# replicas at their primary (MARIADB_MASTER_HOST + MARIADB_REPLICATION_*, replicas only; MariaDB
# 10.11 replicates with GTID, MASTER_USE_GTID=slave_pos, by default).
#
# The entrypoint sources this file (or runs it, if it is executable): it must not `exit` or `set -u`.

shardql_sql_string() { # $1 → SQL string literal body
  local s=${1//\\/\\\\}
  printf '%s' "${s//\'/\\\'}"
}

shardql_run_sql() {
  if declare -F docker_process_sql >/dev/null; then
    docker_process_sql --database=mysql
  else
    MYSQL_PWD="$MARIADB_ROOT_PASSWORD" mariadb --protocol=socket -uroot -hlocalhost --database=mysql
  fi
}

if [ -z "${SHARDQL_MYSQL_USER:-}" ] || [ -z "${SHARDQL_MYSQL_PASSWORD:-}" ]; then
  echo "01-shardql-users.sh: SHARDQL_MYSQL_USER and SHARDQL_MYSQL_PASSWORD must be set" >&2
  false
else
  shardql_user=$(shardql_sql_string "$SHARDQL_MYSQL_USER")
  shardql_password=$(shardql_sql_string "$SHARDQL_MYSQL_PASSWORD")
  repl_user=$(shardql_sql_string "${SHARDQL_REPLICATION_USER:-}")
  repl_password=$(shardql_sql_string "${SHARDQL_REPLICATION_PASSWORD:-}")
  {
    echo "SET SESSION sql_log_bin = 0;"
    echo "CREATE USER IF NOT EXISTS '${shardql_user}'@'%' IDENTIFIED BY '${shardql_password}';"
    echo "ALTER USER '${shardql_user}'@'%' IDENTIFIED BY '${shardql_password}';"
    # Same grants as the local stack: the gateway creates shard databases, and promotion and
    # repair need SUPER, READ_ONLY ADMIN, REPLICATION SLAVE ADMIN, … on any instance.
    echo "GRANT ALL PRIVILEGES ON *.* TO '${shardql_user}'@'%' WITH GRANT OPTION;"
    if [ -n "${SHARDQL_MYSQL_ADMIN_USER:-}" ] && [ -n "${SHARDQL_MYSQL_ADMIN_PASSWORD:-}" ]; then
      # The gateway's account must not write through read_only, or fencing a demoted primary would
      # not stop it; the admin account (topology operations) keeps every privilege.
      admin_user=$(shardql_sql_string "$SHARDQL_MYSQL_ADMIN_USER")
      admin_password=$(shardql_sql_string "$SHARDQL_MYSQL_ADMIN_PASSWORD")
      echo "REVOKE READ_ONLY ADMIN ON *.* FROM '${shardql_user}'@'%';"
      echo "CREATE USER IF NOT EXISTS '${admin_user}'@'%' IDENTIFIED BY '${admin_password}';"
      echo "ALTER USER '${admin_user}'@'%' IDENTIFIED BY '${admin_password}';"
      echo "GRANT ALL PRIVILEGES ON *.* TO '${admin_user}'@'%' WITH GRANT OPTION;"
    fi
    if [ -n "$repl_user" ]; then
      echo "CREATE USER IF NOT EXISTS '${repl_user}'@'%' IDENTIFIED BY '${repl_password}';"
      echo "ALTER USER '${repl_user}'@'%' IDENTIFIED BY '${repl_password}';"
      echo "GRANT REPLICATION SLAVE, BINLOG MONITOR, REPLICA MONITOR ON *.* TO '${repl_user}'@'%';"
    fi
    echo "SET SESSION sql_log_bin = 1;"
  } | shardql_run_sql
fi
