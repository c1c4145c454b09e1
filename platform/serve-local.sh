#!/usr/bin/env bash
# Serve Annolab on http://127.0.0.1:8000 with a real Celery worker beside it.
# Without REDIS_URL the worker uses the embedded file broker (no server needed).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8000}"
# DEBUG is off here as in production, so the site needs a secret key: without one in the
# environment, use (or make) the key kept for this checkout in var/secret_key.
if [ -z "${SECRET_KEY:-}" ]; then
  if [ ! -s var/secret_key ]; then
    mkdir -p var
    (umask 077 && python -c 'import secrets; print(secrets.token_urlsafe(50))' > var/secret_key)
  fi
  SECRET_KEY="$(cat var/secret_key)"
  export SECRET_KEY
fi
# One worker serves both queues (the default one and "scoring") with beat inside; like the
# systemd units and the compose file, it is restarted whenever it exits.
supervise_worker() {
  local pid=""
  trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; [ -z "$pid" ] || wait "$pid" 2>/dev/null; exit 0' INT TERM
  while true; do
    celery -A config worker -Q celery,scoring --beat --loglevel=INFO --concurrency=1 \
      --hostname="local@%h" &
    pid=$!
    wait "$pid" || true
    echo "serve-local: the worker exited; starting it again in 2 s" >&2
    sleep 2
  done
}
supervise_worker &
WORKER=$!
trap 'kill "$WORKER" 2>/dev/null || true; wait "$WORKER" 2>/dev/null || true' EXIT INT TERM
echo "Annolab: http://127.0.0.1:${PORT}/  (worker supervisor pid $WORKER; Ctrl-C stops both)"
gunicorn config.wsgi:application -c platform/gunicorn.conf.py --bind "127.0.0.1:${PORT}"
