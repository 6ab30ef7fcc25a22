# Developer shortcuts; the README's two commands do not need make.
.PHONY: install test lint bench
install:
	bash scripts/install.sh
test:
	.venv/bin/python -m pytest -q
lint:
	.venv/bin/ruff format --check .
	.venv/bin/ruff check .
	bash scripts/typecheck.sh
# `python -m benchmarks --list` shows every suite; `--quick` runs one at its smallest.
bench:
	.venv/bin/python -m benchmarks fusion-speed --questions 1000
	.venv/bin/python -m benchmarks quality --limit 1000
	.venv/bin/python -m benchmarks load --clients 8 --requests 400
