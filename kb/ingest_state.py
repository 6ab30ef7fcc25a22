"""A running ingest's state on disk: the directory lock and the stage marker.

The lock (``.ingest.lock``, an ``flock`` released by the kernel when the process dies, even
by SIGKILL) keeps two ingests from writing one KB directory at once. The stage marker
(``.ingest-work/stage.json``) says which stage an ingest reached, so the error for a
directory an ingest never finished can name it.

``HYBRIDRAG_TEST_INGEST_HOLD=<stage>[:<n>]`` makes an ingest stop at the end of a stage's
work, before the next stage starts (``embeddings:<n>``: after ``n`` chunks), write
``.ingest-work/held`` and sleep, so that a test or a fault probe can kill it there
(``tests/integration/test_ingest_kill.py``, ``evals/probe_ingest.py``). It sleeps at most
``HYBRIDRAG_TEST_INGEST_HOLD_SECONDS`` (300).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from hybridrag.kb.kb_dir import LOCK, work_dir
from hybridrag.kb.model import KBError

STAGES = ("parse", "graph", "embeddings", "indexes")
UPDATE_LOCK = ".documents.lock"  # a change to a KB (kb.kb_update, a document ingest) holds it throughout
HOLD_ENV = "HYBRIDRAG_TEST_INGEST_HOLD"


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def _holder(root: Path) -> str:
    try:
        info = json.loads((work_dir(root) / "stage.json").read_text(encoding="utf-8"))
        return f" (pid {info['pid']}, stage {info['stage']!r})"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


@contextmanager
def ingest_lock(root: Path, wait: float = 0, name: str = LOCK) -> Iterator[None]:
    """Hold the KB directory's ingest lock; a one-line KBError if another ingest holds it.

    ``name``: another lock file of the directory, with the same error (:data:`UPDATE_LOCK`, held
    by a change to a KB from reading the live build to making the new one live).
    """
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(root / name), timeout=max(wait, 0))
    try:
        lock.acquire()
    except Timeout:
        raise KBError(
            f"another ingest is writing KB {root}{_holder(root)}; wait for it to finish (or pass --wait SECONDS)"
        ) from None
    try:
        yield
    finally:
        lock.release()


class StageMarker:
    """Records the stage an ingest is in; honours the test hold hook."""

    def __init__(self, root: Path) -> None:
        """Create the work folder of ``root``."""
        self.folder = work_dir(root)
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "held").unlink(missing_ok=True)  # left by an earlier run killed while held
        self.stage = ""
        hold = os.environ.get(HOLD_ENV, "")
        name, _, count = hold.partition(":")
        self._hold = (name, int(count or 0)) if name else None

    def enter(self, stage: str) -> None:
        """Record that ``stage`` started."""
        self.stage = stage
        _write_json(self.folder / "stage.json", {"stage": stage, "pid": os.getpid(), "since": time.time()})

    def checkpoint(self, stage: str, done: int) -> None:
        """Hold here when the hook names ``stage`` and ``done`` reached its count."""
        if self._hold is None or self._hold[0] != stage or done < self._hold[1]:
            return
        _write_json(self.folder / "held", {"stage": stage, "done": done, "pid": os.getpid()})
        deadline = time.monotonic() + float(os.environ.get(f"{HOLD_ENV}_SECONDS", "300"))
        while time.monotonic() < deadline:
            time.sleep(0.2)
        raise KBError(f"ingest held at stage {stage!r} by {HOLD_ENV} and never killed")
