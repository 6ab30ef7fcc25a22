"""The MoR traversal of an earlier commit, loaded beside today's, so one run times both on the same questions.

:func:`load` reads ``agents/mor/traversal.py`` at a git revision (``git show``) and executes it as
a module of its own; its imports (matching, mentions, the KB) are today's, so the two differ in
the traversal file only. :func:`swapped` points the benchmark's MoR pipeline
(:mod:`benchmarks.speed.modules_methods`) at one of them for the duration of a call.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PATH = "agents/mor/traversal.py"


def load(rev: str) -> ModuleType:
    """``agents/mor/traversal.py`` as of git revision ``rev``, as a module (one-line error when unknown)."""
    name = f"hybridrag.agents.mor._traversal_at_{rev.replace('-', '_')}"
    if name in sys.modules:
        return sys.modules[name]
    got = subprocess.run(["git", "show", f"{rev}:{PATH}"], cwd=ROOT, capture_output=True, text=True, check=False)
    if got.returncode:
        raise SystemExit(f"--baseline {rev}: git cannot read {PATH} there ({got.stderr.strip().splitlines()[0]})")
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    exec(compile(got.stdout, f"{PATH}@{rev}", "exec"), module.__dict__)  # noqa: S102 - our own file, a past version
    sys.modules[name] = module
    return module


@contextmanager
def swapped(module: ModuleType) -> Iterator[None]:
    """Run the benchmark's MoR traversal module with ``module`` as its traversal."""
    from benchmarks.speed import modules_methods

    before = modules_methods.mor_trav
    modules_methods.mor_trav = module
    try:
        yield
    finally:
        modules_methods.mor_trav = before
