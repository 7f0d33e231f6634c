#!/usr/bin/env bash
# Start Debian's PostgreSQL and Redis on loopback and print the URLs to export.
# Used by .ci/run and by developers who want the real services (`eval "$(scripts/start-services.sh)"`).
set -euo pipefail
PGVERSION=$(ls /usr/lib/postgresql | sort -n | tail -n 1)
if ! pg_lsclusters -h | grep -q "^$PGVERSION main"; then
  pg_createcluster "$PGVERSION" main >&2
fi
pg_ctlcluster "$PGVERSION" main start >&2 2>/dev/null || true
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
su postgres -c "psql -q -tc \"SELECT 1 FROM pg_roles WHERE rolname='mteval'\" | grep -q 1 || \
  psql -q -c \"CREATE ROLE mteval LOGIN SUPERUSER PASSWORD 'mteval'\"" >&2
su postgres -c "psql -q -tc \"SELECT 1 FROM pg_database WHERE datname='mteval'\" | grep -q 1 || \
  psql -q -c 'CREATE DATABASE mteval OWNER mteval'" >&2
if ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no >&2
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
echo "export DATABASE_URL=postgres://mteval:mteval@127.0.0.1:5432/mteval"
echo "export CELERY_BROKER_URL=redis://127.0.0.1:6379/0"
