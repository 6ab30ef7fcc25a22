"""Run a method over questions: thread pool, progress bar, resumable JSONL records, summary files.

Output folder layout:

- ``records.jsonl``: one JSON object per question, appended as each finishes: ``id``,
  ``question``, ``topic``, ``qtype``, ``hops``, ``gold`` (answers, answer_ids, keys),
  ``ranked``, ``relevant`` (gold keys per ranked item), ``reachable``/``reachable_kg``,
  ``answer``, ``evidence``, ``trace``, ``usage``, ``seconds`` and ``error`` (None, or the
  exception of a question that failed; one failure never stops the run).
- ``summary.json``, ``summary.md`` and ``summary.png``: see :mod:`evals.summary`.

Resuming: questions whose id already has an error-free record are skipped, so an
interrupted run continues where it stopped and errors are retried. A record cut short by a
full disk or a power loss (a torn last line) is dropped with a warning before resuming (its
bytes are kept in ``records.jsonl.dropped``), and its question is run again.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from hybridrag.evals.datasets import Question
from hybridrag.evals.relevance import Judge
from hybridrag.evals.summary import plot, read_records, summarise, to_markdown
from hybridrag.kb.base import same_kb_build

log = logging.getLogger(__name__)
RECORDS, SUMMARY_JSON, SUMMARY_MD, SUMMARY_PNG = "records.jsonl", "summary.json", "summary.md", "summary.png"


class Invokable(Protocol):
    """Anything run like a compiled LangGraph graph."""

    def invoke(self, input: dict, context: Any = None, **kwargs: Any) -> dict:
        """Answer ``{"question": ...}``."""


def _jsonable(value: Any) -> Any:
    """Fallback for ``json.dumps``: numpy scalars to numbers, anything else to text."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, set | tuple):
        return list(value)
    return str(value)


def run_one(graph: Invokable, context: Any, q: Question, judge: Judge) -> dict:
    """Answer one question and judge it; an exception is recorded, not raised."""
    record: dict[str, Any] = {
        "id": q.id,
        "question": q.question,
        "topic": q.topic,
        "qtype": q.qtype,
        "hops": q.hops,
        "ranked": [],
        "answer": "",
        "evidence": [],
        "trace": [],
        "usage": {},
        "error": None,
    }
    t0 = time.perf_counter()
    try:
        with same_kb_build():  # one KB build per question, even across a re-ingest
            out = graph.invoke({"question": q.question}, context=context) or {}
        for key in ("ranked", "answer", "evidence", "trace", "usage"):
            record[key] = out.get(key) or record[key]
    except Exception as exc:  # noqa: BLE001 - one failing question must not end the run
        record["error"] = f"{type(exc).__name__}: {exc}"
        record["traceback"] = traceback.format_exc(limit=6)
    record["seconds"] = time.perf_counter() - t0
    try:
        record.update(judge.judge(q, record["ranked"]))
        if q.supporting:
            record["planted_answer"] = judge.planted_answer(record["gold"], record["answer"])
    except Exception as exc:  # noqa: BLE001 - e.g. a malformed ranked item
        record.update(
            {
                "gold": {"answers": list(q.answers), "answer_ids": list(q.answer_ids), "keys": []},
                "relevant": [],
                "reachable": None,
                "reachable_kg": None,
            }
        )
        record["error"] = record["error"] or f"judging failed: {type(exc).__name__}: {exc}"
    return record


def _whole_record(line: bytes) -> bool:
    try:
        rec = json.loads(line)
    except ValueError:  # invalid JSON or invalid UTF-8
        return False
    return isinstance(rec, dict) and "id" in rec


def repair_records(records_path: Path) -> int:
    """Drop lines that are not whole records (a torn write); return how many were dropped.

    The file is rewritten atomically with the whole records, each ending in a newline, so the
    next append starts on a line of its own; dropped bytes go to ``records.jsonl.dropped``.
    """
    if not records_path.exists():
        return 0
    raw = records_path.read_bytes()
    if not raw or raw.endswith(b"\n") and all(_whole_record(x) for x in raw.splitlines() if x.strip()):
        return 0
    kept, dropped = [], []
    for no, line in enumerate(raw.split(b"\n"), 1):
        if line.strip():
            (kept if _whole_record(line) else dropped).append((no, line))
    if dropped:
        with open(records_path.with_name(records_path.name + ".dropped"), "ab") as f:
            f.write(b"".join(line + b"\n" for _, line in dropped))
        log.warning(
            "%s: dropped %d torn or unreadable record line(s) (line %s); their questions run again",
            records_path,
            len(dropped),
            ", ".join(str(no) for no, _ in dropped[:5]),
        )
    tmp = records_path.with_name(records_path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(b"".join(line + b"\n" for _, line in kept))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, records_path)
    return len(dropped)


def check_out_dir(out: Path) -> None:
    """Create the output folder ``out``.

    Raises:
        ValueError: one line, when ``out`` is a file or cannot be created, or its records file is
            not a file.
    """
    if out.exists() and not out.is_dir():
        raise ValueError(f"output folder {out} is a file, not a folder; use another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create output folder {out}: {exc.strerror or exc}") from None
    records = out / RECORDS
    if records.exists() and not records.is_file():
        raise ValueError(f"{records} is a directory, not a records file; move it away or use another --out")


def read_run_json(path: Path) -> dict | None:
    """A folder's ``run.json`` settings; None when absent, or torn (a warning naming the file)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
        problem = "" if isinstance(data, dict) else f"holds a {type(data).__name__}, not an object"
    except ValueError as exc:  # invalid JSON or UTF-8: a write cut short
        data, problem = None, str(exc)
    if problem:
        log.warning("%s is torn or unreadable (%s); rewritten from this run's settings, records kept", path, problem)
        return None
    return data


def write_json_atomic(path: Path, data: dict) -> None:
    """Write ``data`` to a temporary file and rename it over ``path`` (a crash leaves the old file)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2, default=_jsonable))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None


def done_ids(records_path: Path) -> set[str]:
    """Ids of questions with an error-free record."""
    return {r["id"] for r in read_records(records_path) if not r.get("error")}


def run_questions(
    graph: Invokable,
    context: Any,
    questions: Sequence[Question],
    out_dir: str | Path,
    judge: Judge,
    workers: int = 1,
    progress: bool = True,
    meta: dict | None = None,
) -> dict:
    """Run ``graph`` over ``questions`` into ``out_dir`` and return the summary.

    Args:
        graph: A compiled method graph (or any object with ``invoke(input, context=...)``).
        context: The method's context object, passed to every call.
        questions: The questions; their ids must be unique.
        out_dir: Output folder (created; an existing ``records.jsonl`` is resumed). A folder that is
            a file or cannot be written, or a ``records.jsonl`` that is not a file, is a ValueError.
        judge: Labels ranked items and computes the ceiling (built on the KB used).
        workers: Questions answered concurrently.
        progress: Show a tqdm progress bar.
        meta: Fields copied into the summary (method, dataset, command, ...).

    Returns:
        The summary dict, also written to ``summary.json``.
    """
    out = Path(out_dir)
    check_out_dir(out)
    records_path = out / RECORDS
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError("question ids must be unique")
    repair_records(records_path)
    skip = done_ids(records_path)
    todo = [q for q in questions if q.id not in skip]
    with open(records_path, "a", encoding="utf-8") as f, ThreadPoolExecutor(max(1, workers)) as pool:
        futures = [pool.submit(run_one, graph, context, q, judge) for q in todo]
        bar = tqdm(
            as_completed(futures),
            total=len(futures),
            disable=not progress,
            desc=str((meta or {}).get("method", "eval")),
            unit="q",
            initial=0,
        )
        for fut in bar:
            f.write(json.dumps(fut.result(), ensure_ascii=False, default=_jsonable) + "\n")
            f.flush()
    wanted = set(ids)
    records = [r for r in read_records(records_path) if r["id"] in wanted]
    summary = summarise(records, {**(meta or {}), "resumed": len(questions) - len(todo)})
    write_summary(summary, out)
    return summary


def write_summary(summary: dict, out: Path) -> None:
    """Write ``summary.json``, ``summary.md`` and ``summary.png`` into ``out``."""
    (out / SUMMARY_JSON).write_text(json.dumps(summary, indent=2, default=_jsonable), encoding="utf-8")
    (out / SUMMARY_MD).write_text(to_markdown(summary), encoding="utf-8")
    plot(summary, out / SUMMARY_PNG)
