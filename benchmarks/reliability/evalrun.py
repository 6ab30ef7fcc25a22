"""``hybridrag eval`` output folders that are damaged or wrong: a resume, or one line and exit 2.

``run(workdir)`` evaluates fusion on two questions of the bundled sample KB with real
``hybridrag eval`` subprocesses, then

- tears ``run.json`` (cut inside a string, as a crash mid-write leaves it) and resumes: the run
  must go on with its records kept, and the warning must name the file;
- makes ``records.jsonl`` a directory, passes ``--out`` naming a file, and ``--out`` where nothing
  can be written: each must be a one-line error with exit code 2, no traceback.

``python -m benchmarks reliability --only evalrun`` runs it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from benchmarks.common import ROOT

QUESTIONS = [
    '{"question": "who directed [Forrest Gump]", "answers": ["Robert Zemeckis"]}',
    '{"question": "who wrote [Big]", "answers": ["Gary Ross", "Anne Spielberg"]}',
]


def _eval(out: Path, questions: Path) -> tuple[list[str], subprocess.CompletedProcess]:
    args = [
        "eval",
        "--method",
        "fusion",
        "--questions",
        str(questions),
        "--kb",
        "sample",
        "--out",
        str(out),
        "--no-progress",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return args, subprocess.run(
        [sys.executable, "-m", "hybridrag.app.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _err_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [x for x in done.stderr.splitlines() if x.strip()]


def _one_line_error(probe: str, out: Path, questions: Path) -> dict:
    args, done = _eval(out, questions)
    lines = _err_lines(done)
    tb = any(x.startswith("Traceback") for x in lines)
    ok = done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and not tb
    shown = lines[-1] if lines else "nothing on stderr"
    return {
        "probe": probe,
        "command": "hybridrag " + shlex.join(args),
        "result": f"exit {done.returncode}, {len(lines)} stderr line(s){' with a TRACEBACK' if tb else ''}: "
        f"{shown[:200]}",
        "ok": ok,
    }


def _unwritable(work: Path) -> Path:
    """A folder path nothing can be created in (root ignores file modes: /sys refuses even root)."""
    if os.geteuid() == 0:
        return Path("/sys/hybridrag-probe-out")
    locked = work / "read-only"
    locked.mkdir(exist_ok=True)
    locked.chmod(0o500)
    return locked / "out"


def torn_run_row(work: Path, questions: Path) -> dict:
    """A finished run whose run.json is torn, resumed with the same command."""
    out = work / "torn"
    args, first = _eval(out, questions)
    if first.returncode != 0:
        return {
            "probe": "eval: resume after a torn run.json",
            "command": "hybridrag " + shlex.join(args),
            "result": f"first run: exit {first.returncode}: {(_err_lines(first) or [''])[-1][:200]}",
            "ok": False,
        }
    run_json = out / "run.json"
    text = run_json.read_text(encoding="utf-8")
    run_json.write_text(text[: text.index('"dataset": "') + 13], encoding="utf-8")  # cut inside a string
    records = (out / "records.jsonl").read_text(encoding="utf-8")
    _, done = _eval(out, questions)
    lines = _err_lines(done)
    named = [x for x in lines if "run.json" in x]
    kept = (out / "records.jsonl").read_text(encoding="utf-8") == records
    try:
        resumed = json.loads((out / "summary.json").read_text(encoding="utf-8")).get("resumed")
        repaired = json.loads(run_json.read_text(encoding="utf-8")).get("method") == "fusion"
    except (OSError, ValueError):
        resumed, repaired = None, False
    ok = done.returncode == 0 and bool(named) and kept and resumed == len(QUESTIONS) and repaired
    return {
        "probe": "eval: resume after a torn run.json",
        "command": f"hybridrag {shlex.join(args)}; cut run.json inside the dataset name; the same command again",
        "result": f"exit {done.returncode}; stderr: {(named or lines or ['nothing'])[-1][:200]!r}; records "
        f"{'kept' if kept else 'CHANGED'}, {resumed} question(s) resumed; run.json "
        f"{'rewritten' if repaired else 'still unreadable'}",
        "ok": ok,
    }


def run(workdir: Path) -> list[dict]:
    """Every eval-folder probe under ``workdir``; the rows."""
    workdir.mkdir(parents=True, exist_ok=True)
    questions = workdir / "questions.jsonl"
    questions.write_text("\n".join(QUESTIONS) + "\n", encoding="utf-8")
    rows = [torn_run_row(workdir, questions)]
    (workdir / "dir-records" / "records.jsonl").mkdir(parents=True)
    rows.append(_one_line_error("eval: records.jsonl is a directory", workdir / "dir-records", questions))
    (workdir / "a-file").write_text("not a folder\n", encoding="utf-8")
    rows.append(_one_line_error("eval: --out names a file", workdir / "a-file", questions))
    rows.append(_one_line_error("eval: --out under a file", workdir / "a-file" / "run", questions))
    rows.append(_one_line_error("eval: --out where nothing can be written", _unwritable(workdir), questions))
    return rows
