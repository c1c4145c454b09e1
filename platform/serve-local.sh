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
celery -A config worker --beat --loglevel=INFO --concurrency=1 --hostname="local@%h" &
WORKER=$!
trap 'kill "$WORKER" 2>/dev/null || true; wait "$WORKER" 2>/dev/null || true' EXIT INT TERM
echo "Annolab: http://127.0.0.1:${PORT}/  (worker pid $WORKER; Ctrl-C stops both)"
gunicorn config.wsgi:application -c platform/gunicorn.conf.py --bind "127.0.0.1:${PORT}"
