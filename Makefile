# The two commands: `make app` sets up and starts the app; `make test` sets up and runs the tests.
.PHONY: app test lint bench

app:
	@scripts/setup.sh
	.venv/bin/local2 ui

test:
	@scripts/setup.sh --dev --browser
	.venv/bin/ruff check src tests bench testkit
	.venv/bin/lint-imports
	.venv/bin/mypy
	.venv/bin/python -m pytest -q -n 4 --dist loadfile

lint:
	.venv/bin/ruff check src tests bench testkit
	.venv/bin/ruff format --check src tests bench testkit
	.venv/bin/lint-imports
	.venv/bin/mypy

bench:
	.venv/bin/python bench/history_growth.py
