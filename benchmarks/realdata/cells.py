"""The eval runs behind the real-data page: one ``hybridrag eval`` per cell, cached in its run folder.

A cell's folder (``RUNS/<slug>``) is named by everything that sets its result (method, dataset, model,
``--set`` fields, limit, KB), so a re-run finds a finished cell and reads its summary and records
without running anything; a cell stopped half-way resumes (the eval's own resume). ``--fresh``
deletes the folders of the cells it is about to run. A folder does not know the code that filled
it: after changing a method, run with ``--fresh`` (the page names the commit of every run).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import eval_cell, finished

LLM_METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")
ORACLE_SETS: dict[str, tuple[str, ...]] = {"hybgrag": ("answer=true",), "mor": ("answer=true",)}  # QA mode
SMOLLM = "local:smollm2"


@dataclass(frozen=True)
class Cell:
    """One ``hybridrag eval`` run of the page."""

    method: str
    dataset: str
    llm: str | None = None
    sets: tuple[str, ...] = ()
    limit: int | None = None
    kb: str | None = None

    @property
    def slug(self) -> str:
        """The run folder's name: every setting that changes the result."""
        parts = [self.method, self.dataset, self.llm or "nollm", *self.sets]
        parts += [f"n{self.limit}" if self.limit else "all"] + (["kb-" + Path(self.kb).name] if self.kb else [])
        return re.sub(r"[^\w.=-]+", "_", "-".join(parts))

    def argv(self, runs: Path) -> list[str]:
        """The eval's arguments (its output folder under ``runs``)."""
        out = ["--method", self.method, "--dataset", self.dataset, "--workers", "1", "--no-progress"]
        out += ["--llm", self.llm] if self.llm else []
        out += ["--limit", str(self.limit)] if self.limit else []
        out += ["--kb", self.kb] if self.kb else []
        for s in self.sets:
            out += ["--set", s]
        return [*out, "--out", str(runs / self.slug)]

    def command(self) -> str:
        """The ``hybridrag eval`` command a reader runs for this cell (no output folder)."""
        argv = self.argv(Path("."))[:-2]
        return "hybridrag eval " + " ".join(a for a in argv if a not in ("--no-progress",))


@dataclass
class Result:
    """A finished cell: its summary and records (empty with ``failed`` when the run failed)."""

    cell: Cell
    summary: dict
    records: list[dict]
    answer_shown: dict[str, bool] | None = None  # stand-in over documents: an answer prompt showed the gold

    @property
    def failed(self) -> str:
        """The failure message ('' when the cell ran)."""
        return str(self.summary.get("failed", ""))


def _records(folder: Path) -> list[dict]:
    from hybridrag.evals.summary import read_records

    path = folder / "records.jsonl"
    latest = {r["id"]: r for r in read_records(path)} if path.exists() else {}
    return list(latest.values())


def run_cell(cell: Cell, runs: Path, expected: int, fresh: bool = False) -> Result:
    """The cell's result: read from its folder when it holds ``expected`` questions, else run (resumed)."""
    folder = runs / cell.slug
    if fresh and folder.exists():
        shutil.rmtree(folder)
    if finished(folder, expected):
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    else:
        summary = eval_cell(cell.argv(runs))
    shown = folder / "oracle_answer_shown.json"
    answer_shown = json.loads(shown.read_text(encoding="utf-8")) if shown.exists() else None
    return Result(cell, summary, _records(folder) if not summary.get("failed") else [], answer_shown)
