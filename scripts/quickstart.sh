#!/usr/bin/env bash
# Install, build the bundled sample KB, and answer a question with the fusion method (offline).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/hybridrag ask "who directed Forrest Gump" --trace
