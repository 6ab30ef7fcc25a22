#!/usr/bin/env bash
# mypy over the packages it guards (kb, tools, graphs, agents/llm), as `hybridrag.*` modules: the
# repository root is the package, so mypy is pointed at a folder holding a link named hybridrag.
set -euo pipefail
cd "$(dirname "$0")/.."
link_dir=$(mktemp -d)
trap 'rm -rf "$link_dir"' EXIT
ln -s "$PWD" "$link_dir/hybridrag"
MYPY=${MYPY:-.venv/bin/mypy}
MYPYPATH="$link_dir" "$MYPY" --config-file pyproject.toml \
  -p hybridrag.kb -p hybridrag.tools -p hybridrag.graphs -p hybridrag.agents.llm "$@"
