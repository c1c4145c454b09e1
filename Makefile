# Annolab: `make demo` serves the demo lab; `make test` runs the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test browser-check install lint format serve worker clean messages

# pip's own output is a few lines per package; PIP_STEPS folds it into one line that counts
# the packages fetched (pip's errors go to stderr and are shown as they are).
SHELL := bash
.SHELLFLAGS := -o pipefail -c
PIP_STEPS = awk '/^Collecting /{n++; printf "\r      %d packages fetched (%s)\033[K", n, $$2; fflush()} \
	/^Installing collected/{printf "\n      installing them ...\n"; fflush()} \
	/^Successfully installed/{print "      done"}'

$(STAMP): pyproject.toml
	@echo "[1/4] Installing Annolab and its packages into $(VENV) (about a minute the first time) ..."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@PYTHONWARNINGS=ignore $(BIN)/python -m pip install --progress-bar off -e '.[dev]' | $(PIP_STEPS)
	@touch $(STAMP)

install: $(STAMP)

# The demo runs with DEBUG off, so it needs a secret key: one generated for this checkout
# and kept in var/secret_key (never used elsewhere).
LOCAL_KEY := var/secret_key
LOCAL_ENV = SECRET_KEY="$$(cat $(LOCAL_KEY))"

$(LOCAL_KEY):
	@mkdir -p var
	@umask 077 && $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@

# load_demo also makes the agreement demo's media offline (examples/demo_media.py: audio and
# point clouds; no video, since a fresh machine has no ffmpeg).
# PORT=8001 make demo serves on another port.
PORT ?= 8000
export PORT

demo: $(STAMP) $(LOCAL_KEY)
	@echo "[2/4] Preparing the database and the static files ..."
	@$(LOCAL_ENV) $(BIN)/python manage.py migrate --noinput --verbosity 0
	@$(LOCAL_ENV) $(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@echo "[3/4] Loading the demo lab (the first time: about half a minute) ..."
	@$(LOCAL_ENV) $(BIN)/python manage.py load_demo --site http://127.0.0.1:$(PORT) \
	  --summary-file var/demo-summary.txt
	@echo "[4/4] Starting the web server and the worker ..."
	@$(LOCAL_ENV) SERVE_READY_NOTE=var/demo-summary.txt PATH="$(abspath $(BIN)):$$PATH" \
	  bash platform/serve-local.sh

# Tests run in TEST_PROCESSES processes (pytest-xdist); each has its own test database and
# Redis database (REDIS_URL's number, then the next ones: conftest.py).
TEST_PROCESSES ?= 3

# The browser tests drive a real Chromium through Playwright, found as tests/test_browser.py
# finds it (chromium on PATH, else /usr/bin/chromium); without it they are skipped.
CHROMIUM ?= $(shell command -v chromium || echo /usr/bin/chromium)

test: $(STAMP) browser-check
	$(BIN)/python -m pytest -n $(TEST_PROCESSES)

browser-check:
	@if [ -x "$(CHROMIUM)" ]; then \
	  echo "Browser tests: run in $(CHROMIUM) (Playwright)."; \
	else \
	  echo "Browser tests: SKIPPED, no Chromium (not on PATH, no /usr/bin/chromium)."; \
	  echo "  They drive a real Chromium through Playwright; Playwright's own browser download"; \
	  echo "  is not used. Install it to run them: on Debian, apt-get install chromium"; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) var staticfiles db.sqlite3 *.egg-info examples/agreement_demo/media

# The translation catalogues (locale/): extract the marked strings into every language's .po
# file, then compile the .mo files the server reads (both need GNU gettext).
messages: $(STAMP)
	@for domain in django djangojs; do DEBUG=1 $(BIN)/python manage.py makemessages -d $$domain \
	  -l de -l pt -l it -l es -l fr -l ar --no-obsolete --no-location --ignore=.venv \
	  --ignore=staticfiles --ignore=static/vendor --ignore=var --ignore=benchmarks \
	  --ignore=examples --ignore=node_modules --verbosity 0; done
	@DEBUG=1 $(BIN)/python manage.py compilemessages --verbosity 0 --ignore=.venv
