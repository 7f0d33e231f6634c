# `make run`: a local demo on SQLite with tasks in-process. `make test`: the whole suite
# (on PostgreSQL and Redis when DATABASE_URL and CELERY_BROKER_URL are set).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Where `make run` serves: `make run PORT=8001`, `make run HOST=0.0.0.0` (then set ALLOWED_HOSTS too).
HOST ?= 127.0.0.1
PORT ?= 8000
# `make run DEMO=ranking`: the sample campaign of one protocol (annotation/demo/<protocol>.jsonl) instead.
DEMO ?=

.PHONY: run test lint lint-imports bench install

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $(STAMP)

# Development settings, read by config/settings.py: a generated SECRET_KEY and DEBUG=1, so that every
# manage.py command works without extra variables. Written only when there is no .env (noclobber: an
# existing one is never overwritten, even by two makes at once); git-ignored.
.env:
	@key=$$($(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))') && \
	  (umask 077 && set -C && printf 'SECRET_KEY=%s\nDEBUG=1\n' "$$key" > $@)
	@echo "Wrote $@ for development: a generated SECRET_KEY and DEBUG=1."

install: $(STAMP) .env

run: $(STAMP) .env
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py load_demo --base-url http://$(HOST):$(PORT)$(if $(DEMO), --demo $(DEMO))
	DEBUG=1 $(BIN)/python manage.py runserver $(HOST):$(PORT)

# In parallel, a worker per core (pytest-xdist), each with its own test database, queue and cache keys
# (config/settings_test.py); a module's tests stay on one worker, so module fixtures are built once.
# `make test PYTEST_WORKERS=0` runs in one process.
PYTEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m pytest $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadscope)

lint: $(STAMP) lint-imports
	$(BIN)/ruff check .

# The import architecture (.importlinter, docs/architecture.md): layers one way, annotation below evaluation.
lint-imports: $(STAMP)
	$(BIN)/lint-imports --no-logo

# The benchmark's gunicorn runs with DEBUG=0, which needs the collected static files (config/checks.py).
bench: $(STAMP)
	DEBUG=0 SECRET_KEY=bench ALLOWED_HOSTS=localhost $(BIN)/python manage.py collectstatic --noinput -v0
	$(BIN)/python benchmarks/annotate.py
