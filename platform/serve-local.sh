#!/usr/bin/env bash
# Serve Annolab on http://127.0.0.1:8000 with a real Celery worker beside it.
# Without REDIS_URL the worker uses the embedded file broker (no server needed).
# PORT picks another port; GUNICORN_WORKERS (default 2 here) the web processes;
# SERVE_READY_SECONDS (default 120) how long to wait for the first page; SERVE_READY_NOTE a
# file printed under the address then.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8000}"
URL="http://127.0.0.1:${PORT}/"
READY_SECONDS="${SERVE_READY_SECONDS:-120}"
# Seconds Ctrl-C waits for the web server and the worker to finish before killing them.
STOP_SECONDS=4
# A laptop needs few web processes (the production default is 2 per core plus one), and
# an idle one must exit at once when stopped: requests are short here.
export GUNICORN_WORKERS="${GUNICORN_WORKERS:-2}"
export GUNICORN_GRACEFUL_TIMEOUT="${GUNICORN_GRACEFUL_TIMEOUT:-3}"
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
# systemd units and the compose file, it is restarted whenever it exits. TERM stops it.
supervise_worker() {
  local pid="" stopping=""
  trap 'stopping=1; [ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true' TERM
  while [ -z "$stopping" ]; do
    celery -A config worker -Q celery,scoring --beat --loglevel=INFO --concurrency=1 \
      --schedule="${CELERY_DATA_DIR:-var/celery}/celerybeat-schedule" \
      --hostname="local@%h" &
    pid=$!
    # wait returns early when TERM arrives; wait again for the worker's own exit.
    wait "$pid" || true
    [ -z "$stopping" ] || { wait "$pid" 2>/dev/null || true; break; }
    echo "serve-local: the worker exited; starting it again in 2 s" >&2
    sleep 2
  done
}

# The web server and the worker run in process groups of their own (job control), so
# Ctrl-C reaches only this script, which stops them in order: TERM, a bounded wait, then
# KILL for whatever is left.
set -m
supervise_worker &
WORKER=$!
gunicorn config.wsgi:application -c platform/gunicorn.conf.py --bind "127.0.0.1:${PORT}" &
WEB=$!
set +m

alive() { kill -0 "$1" 2>/dev/null; }

stop_all() {
  trap '' INT TERM
  echo "Annolab: stopping the web server and the worker ..."
  kill -TERM "$WEB" "$WORKER" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_SECONDS))
  while { alive "$WEB" || alive "$WORKER"; } && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.2
  done
  for pid in "$WEB" "$WORKER"; do
    if alive "$pid"; then
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
  echo "Annolab: stopped."
}
trap 'stop_all; exit 0' INT TERM

# The address is printed once the site answers (any HTTP status below 500).
answers() {
  python - "$URL" <<'EOF'
import signal
import sys
import urllib.error
import urllib.request

signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C while polling: no traceback
try:
    urllib.request.urlopen(sys.argv[1], timeout=10)  # a first request may wait on imports
except urllib.error.HTTPError as error:
    sys.exit(error.code >= 500)
except OSError:
    sys.exit(1)
EOF
}
deadline=$((SECONDS + READY_SECONDS))
until answers; do
  if ! alive "$WEB"; then
    echo "serve-local: the web server exited before it answered" >&2
    stop_all
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "serve-local: no answer from $URL within $READY_SECONDS s" >&2
    stop_all
    exit 1
  fi
  sleep 0.5
done
# The address and make demo's accounts and links (SERVE_READY_NOTE: a file) go out in
# one write, so the worker's start-up banner on the same terminal cannot split them.
block=$(mktemp)
{
  echo
  echo "Annolab is ready: open $URL   (Ctrl-C stops the web server and the worker)"
  if [ -n "${SERVE_READY_NOTE:-}" ] && [ -r "$SERVE_READY_NOTE" ]; then
    cat "$SERVE_READY_NOTE"
  fi
  echo
} >"$block"
cat "$block"
rm -f "$block"

status=0
wait "$WEB" || status=$?
# The web server stopped by itself (a signal lands in the trap above instead).
echo "serve-local: the web server exited with status $status" >&2
stop_all
exit "$status"
