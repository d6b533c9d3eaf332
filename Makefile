# One target per check; .ci/run runs `install` then `test`.
.PHONY: install test lint format typecheck bench demo

install:
	python3 -m pip install -e '.[dev]'

test:
	python3 -m pytest

lint:
	ruff check src tests bench
	ruff format --check src tests bench

format:
	ruff format src tests bench
	ruff check --fix src tests bench

typecheck:
	mypy

bench:
	python3 bench/per_run.py
	python3 bench/bootstrap.py
	python3 bench/concurrency.py

demo:
	kaudit run --suite builtin --agent reference --k 8 --ledger audit.sqlite
	kaudit report audit.sqlite
