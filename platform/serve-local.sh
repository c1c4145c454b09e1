#!/usr/bin/env bash
# Serve Annolab on http://127.0.0.1:8000 with a real Celery worker beside it.
# Without REDIS_URL the worker uses the embedded file broker (no server needed).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8000}"
celery -A config worker --beat --loglevel=INFO --concurrency=1 --hostname="local@%h" &
WORKER=$!
trap 'kill "$WORKER" 2>/dev/null || true; wait "$WORKER" 2>/dev/null || true' EXIT INT TERM
echo "Annolab: http://127.0.0.1:${PORT}/  (worker pid $WORKER; Ctrl-C stops both)"
gunicorn config.wsgi:application -c platform/gunicorn.conf.py --bind "127.0.0.1:${PORT}"
