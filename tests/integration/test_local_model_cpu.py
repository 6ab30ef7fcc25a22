"""The bundled local model runs on this CPU, and a build it cannot run is a clear error, not a signal.

The model is loaded in a child process: if llama.cpp executes an instruction this CPU lacks, the
child dies with SIGILL, and this test fails with a message naming the build's and the CPU's
instruction sets instead of taking the test run down with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

CHILD = """
import sys
from hybridrag.agents.llm.models import load_chat_model
out = load_chat_model("local:smollm2").invoke("Say hi.")
print("REPLY", bool(out.content.strip()))
"""


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **env},
    )


def test_local_model_runs_in_a_child_process():
    from hybridrag.agents.llm.models import cpu_flags, llama_build_flags

    proc = _run(CHILD)
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        pytest.fail(
            f"llama.cpp died with {name}: the build uses {sorted(llama_build_flags())}, this CPU "
            f"lacks {sorted(llama_build_flags() - cpu_flags())}; re-run `bash scripts/install.sh`"
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "REPLY" in proc.stdout


def test_a_build_for_missing_instructions_is_refused_before_loading(tmp_path):
    record = tmp_path / "llama_cpu_flags"
    record.write_text("avx2 avx9000_imaginary\n", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hybridrag.app.cli",
            "ask",
            "who directed Big",
            "--method",
            "hybgrag",
            "--llm",
            "local:smollm2",
            "--max-iterations",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HYBRIDRAG_LLAMA_CPU_FLAGS_FILE": str(record)},
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "avx9000_imaginary" in lines[0] and "Traceback" not in proc.stderr
