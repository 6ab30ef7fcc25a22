"""Whether this CPU has the instructions the installed llama.cpp was built for (else it dies of SIGILL)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cpu_flags() -> set[str]:
    """Instruction-set flags this CPU reports (``/proc/cpuinfo``; empty where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def llama_build_flags(prefix: str | None = None) -> set[str]:
    """The CPU flags the installed llama.cpp was built for (written by scripts/install.sh).

    ``HYBRIDRAG_LLAMA_CPU_FLAGS_FILE`` points at another record (tests, custom builds).
    """
    override = os.environ.get("HYBRIDRAG_LLAMA_CPU_FLAGS_FILE")
    path = Path(override) if override else Path(prefix or sys.prefix) / "share" / "hybridrag" / "llama_cpu_flags"
    try:
        return set(path.read_text(encoding="utf-8").split())
    except OSError:
        return set()


def check_cpu_support(built: set[str] | None = None, have: set[str] | None = None) -> None:
    """Refuse to load llama.cpp on a CPU that lacks an instruction the build used (else SIGILL)."""
    built = llama_build_flags() if built is None else built
    have = cpu_flags() if have is None else have
    missing = sorted(built - have) if have else []
    if missing:
        from hybridrag.agents.llm.errors import ModelConfigError

        raise ModelConfigError(
            f"the installed llama-cpp-python was built for CPU instructions this machine lacks "
            f"({', '.join(missing)}); re-run `bash scripts/install.sh` to build it for this CPU"
        )
