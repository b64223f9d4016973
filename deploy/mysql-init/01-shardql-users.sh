#!/bin/bash
# First-start setup of every shardql MariaDB container, primary or replica. The official image's
# entrypoint runs the files of /docker-entrypoint-initdb.d once, on an empty data directory, while
# its temporary server (socket only) is up. A shell script rather than a .sql file because the
# passwords come from the environment.
#
#   SHARDQL_MYSQL_USER / SHARDQL_MYSQL_PASSWORD                the application's (gateway's) account:
#                                                              rows of the shard databases only
#   SHARDQL_MYSQL_ADMIN_USER / SHARDQL_MYSQL_ADMIN_PASSWORD    operations (provision, promote, fence, move,
#                                                              making primaries writable)
#   SHARDQL_REPLICATION_USER / SHARDQL_REPLICATION_PASSWORD    the replication account
#
# Every server starts read-only (deploy/mysql-conf/shardql.cnf). The application's account has no
# SUPER and no READ_ONLY ADMIN, so it can neither write through read_only nor turn it off: a
# demoted primary that restarts refuses it. Same grants as the local stack (src/stack/mysql.ts).
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

if [ -z "${SHARDQL_MYSQL_USER:-}" ] || [ -z "${SHARDQL_MYSQL_PASSWORD:-}" ] || [ -z "${SHARDQL_MYSQL_ADMIN_USER:-}" ] || [ -z "${SHARDQL_MYSQL_ADMIN_PASSWORD:-}" ]; then
  echo "01-shardql-users.sh: SHARDQL_MYSQL_USER, SHARDQL_MYSQL_PASSWORD, SHARDQL_MYSQL_ADMIN_USER and SHARDQL_MYSQL_ADMIN_PASSWORD must be set" >&2
  false
else
  shardql_user=$(shardql_sql_string "$SHARDQL_MYSQL_USER")
  shardql_password=$(shardql_sql_string "$SHARDQL_MYSQL_PASSWORD")
  admin_user=$(shardql_sql_string "$SHARDQL_MYSQL_ADMIN_USER")
  admin_password=$(shardql_sql_string "$SHARDQL_MYSQL_ADMIN_PASSWORD")
  repl_user=$(shardql_sql_string "${SHARDQL_REPLICATION_USER:-}")
  repl_password=$(shardql_sql_string "${SHARDQL_REPLICATION_PASSWORD:-}")
  {
    echo "SET SESSION sql_log_bin = 0;"
    echo "CREATE USER IF NOT EXISTS '${shardql_user}'@'%' IDENTIFIED BY '${shardql_password}';"
    echo "ALTER USER '${shardql_user}'@'%' IDENTIFIED BY '${shardql_password}';"
    # Rows of the shard (db00000) and mod-shard (msdb00000) databases, nothing else: no DDL, no
    # SUPER / READ_ONLY ADMIN, no system tables.
    echo "REVOKE ALL PRIVILEGES, GRANT OPTION FROM '${shardql_user}'@'%';"
    echo "GRANT SELECT, INSERT, UPDATE, DELETE ON \`db%\`.* TO '${shardql_user}'@'%';"
    echo "GRANT SELECT, INSERT, UPDATE, DELETE ON \`msdb%\`.* TO '${shardql_user}'@'%';"
    # Provisioning, promotion, fencing, shard copies and making primaries writable need SUPER,
    # READ_ONLY ADMIN, REPLICATION SLAVE ADMIN, … on any instance.
    echo "CREATE USER IF NOT EXISTS '${admin_user}'@'%' IDENTIFIED BY '${admin_password}';"
    echo "ALTER USER '${admin_user}'@'%' IDENTIFIED BY '${admin_password}';"
    echo "GRANT ALL PRIVILEGES ON *.* TO '${admin_user}'@'%' WITH GRANT OPTION;"
    if [ -n "$repl_user" ]; then
      echo "CREATE USER IF NOT EXISTS '${repl_user}'@'%' IDENTIFIED BY '${repl_password}';"
      echo "ALTER USER '${repl_user}'@'%' IDENTIFIED BY '${repl_password}';"
      echo "GRANT REPLICATION SLAVE, BINLOG MONITOR, REPLICA MONITOR ON *.* TO '${repl_user}'@'%';"
    fi
    echo "SET SESSION sql_log_bin = 1;"
  } | shardql_run_sql
fi
