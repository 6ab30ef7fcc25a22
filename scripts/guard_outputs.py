"""Record or compare what every method outputs, to keep a refactor behaviour-preserving.

``python scripts/guard_outputs.py record OUT.json`` runs ``hybridrag eval`` (so it works whatever
the package layout is) for every method on a fixed MetaQA dev sample with the perfect-LLM
stand-in (``--llm oracle``) and fusion on the bundled sample KB, and keeps, per question, the
ranked ids and scores, the answer and the sequence of trace nodes. ``check OLD.json`` runs the
same and prints every difference; it exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLM_METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")
DATASETS = (("metaqa-1hop", 100), ("metaqa-2hop", 50), ("metaqa-3hop", 50))
SAMPLE_QUESTIONS = ROOT / "tests" / "fixtures" / "guard_sample_questions.txt"


def _cells() -> list[tuple[str, list[str]]]:
    """(cell name, ``hybridrag eval`` arguments) of every recorded run."""
    cells = [("fusion/sample", ["--method", "fusion", "--kb", "sample", "--questions", str(SAMPLE_QUESTIONS)])]
    for dataset, limit in DATASETS:
        cells.append((f"fusion/{dataset}", ["--method", "fusion", "--dataset", dataset, "--limit", str(limit)]))
        for method in LLM_METHODS:
            cells.append(
                (
                    f"{method}/{dataset}",
                    ["--method", method, "--dataset", dataset, "--limit", str(limit), "--llm", "oracle"],
                )
            )
    return cells


def _canonical(record: dict) -> dict:
    """What must not change: ranked ids and scores, the answer, the trace's node sequence, errors."""
    return {
        "ranked": [[r.get("id"), round(float(r.get("score") or 0.0), 9)] for r in record.get("ranked") or []],
        "answer": record.get("answer"),
        "nodes": [t.get("node") for t in record.get("trace") or [] if isinstance(t, dict)],
        "error": (record.get("error") or "").split(":")[0] or None,
    }


def collect(only: str | None = None) -> dict[str, dict[str, dict]]:
    """Run every cell (or those whose name contains ``only``) and return their canonical records."""
    out: dict[str, dict[str, dict]] = {}
    exe = str(Path(sys.executable).with_name("hybridrag"))
    with tempfile.TemporaryDirectory(prefix="guard-") as tmp:
        for name, args in _cells():
            if only and only not in name:
                continue
            folder = Path(tmp) / name.replace("/", "-")
            cmd = [exe, "eval", *args, "--out", str(folder), "--workers", "1", "--no-progress"]
            sys.stderr.write(f"{name}: {' '.join(cmd[1:])}\n")
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            rows = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines() if line.strip()]
            out[name] = {str(r["id"]): _canonical(r) for r in sorted(rows, key=lambda r: str(r["id"]))}
    return out


def diff(old: dict, new: dict) -> list[str]:
    """Every cell and question whose canonical output differs."""
    problems = []
    for cell in sorted(set(old) | set(new)):
        a, b = old.get(cell), new.get(cell)
        if a is None or b is None:
            problems.append(f"{cell}: only in {'new' if a is None else 'old'}")
            continue
        for qid in sorted(set(a) | set(b)):
            if a.get(qid) != b.get(qid):
                problems.append(f"{cell} {qid}: {json.dumps(a.get(qid))[:300]} != {json.dumps(b.get(qid))[:300]}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """``record OUT`` or ``check OLD`` (``--only`` restricts to matching cells)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["record", "check"])
    p.add_argument("file", type=Path)
    p.add_argument("--only", help="cells whose name contains this text")
    args = p.parse_args(argv)
    new = collect(args.only)
    if args.action == "record":
        args.file.write_text(json.dumps(new, indent=0, sort_keys=True) + "\n")
        sys.stdout.write(f"recorded {sum(map(len, new.values()))} outputs in {len(new)} cells to {args.file}\n")
        return 0
    old = json.loads(args.file.read_text())
    if args.only:
        old = {k: v for k, v in old.items() if args.only in k}
    problems = diff(old, new)
    for line in problems[:50]:
        sys.stdout.write(line + "\n")
    sys.stdout.write(f"{len(problems)} difference(s) over {sum(map(len, new.values()))} outputs\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
