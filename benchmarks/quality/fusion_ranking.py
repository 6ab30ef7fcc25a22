"""``python -m benchmarks fusion-ranking``: fusion's scoring choices on MetaQA dev, a section of a docs page.

The section is "Fusion's ranking" of docs/benchmarks_fusion.md.

MetaQA dev questions are split deterministically by question id (SHA-1 of the id, even →
*tune*, odd → *held-out*). Choices are compared on the tune part; the report's main tables
are the held-out part only, where fusion's default, the paper's scoring and the three
baselines (vector-only, BM25, graph-only) answer the same questions. Every cell is one
``hybridrag eval --questions PART.jsonl --kb KB`` run (the first N of a seeded shuffle of
that part; ``--tune-limit`` for the tune cells, ``--limit`` for the held-out ones), whose
command is printed beside its numbers. Each cell starts from an empty folder (``--resume``
keeps finished records). Test splits are never read.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks.common import DOCS, ROOT, arg, eval_cell
from hybridrag.evals.datasets import load_metaqa
from hybridrag.evals.hybrid import COMPLETENESS, hybrid_kb, metaqa_dir
from hybridrag.evals.markdown import machine, provenance, write_section
from hybridrag.evals.markdown import table as table_lines

COLUMNS = [
    ("recall_any@10", "R@10"),
    ("mrr", "MRR"),
    ("ndcg@10", "nDCG@10"),
    ("hit@1", "Hit@1"),
    ("recall@20", "Recall@20"),
    ("answer_em", "answer EM"),
    ("answer_hits@1", "answer Hits@1"),
]
GOAL = ["recall_any@10", "mrr", "ndcg@10", "hit@1", "recall@20"]
BASELINES = {"vector-only": ["mode=vector"], "BM25": ["mode=bm25"], "graph-only": ["mode=graph"]}
MAIN = {"fusion default": [], "fusion, paper scoring": ["scoring=paper"], **BASELINES}
ONE_HOP = ["hybrid-100", "hybrid-50", "hybrid-0"]
MULTI_HOP = ["hybrid-100:2hop", "hybrid-100:3hop"]
TUNE = [(d, {f"scoring={s}": [f"scoring={s}"] for s in ("evidence", "paper", "normalised", "rrf")}) for d in ONE_HOP]
TUNE += [(d, {f"seed_passages={n}": [f"seed_passages={n}"] for n in (0, 50, 100)}) for d in ("hybrid-50", "hybrid-0")]
TUNE += [("hybrid-100", {f"hops={h}": [f"hops={h}"] for h in (2, 3)})]  # k-hop on 1-hop questions
HELD = [(d, {**MAIN, "default without the dense branch (k1=0)": ["k1=0"]}) for d in ONE_HOP]
HELD += [(d, {**MAIN, "default, hops=2": ["hops=2"], "default, hops=3": ["hops=3"]}) for d in MULTI_HOP]
HEADING = "## Fusion's ranking: scoring choices on MetaQA dev"
DOC = DOCS / "benchmarks_fusion.md"


def part_of(question_id: str) -> str:
    """'tune' or 'heldout': the parity of the SHA-1 of the question id."""
    return "tune" if int(hashlib.sha1(question_id.encode()).hexdigest(), 16) % 2 == 0 else "heldout"


def question_file(dataset: str, part: str, folder: Path) -> Path:
    """Write one part of a dataset's dev questions as JSONL (ids kept) and return the file."""
    hops = int(dataset.partition(":")[2][:1] or 1)
    path = folder / f"metaqa-{hops}hop-{part}.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        qs = load_metaqa(metaqa_dir() / f"dev_{hops}hop.txt", prefix=f"metaqa-{hops}hop")
        rows = [
            {
                "id": q.id,
                "question": q.question,
                "answers": list(q.answers),
                "qtype": q.qtype,
                "topic": q.topic,
                "hops": q.hops,
            }
            for q in qs
            if part_of(q.id) == part
        ]
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def kb_of(dataset: str) -> Path:
    """The KB directory of ``hybrid-<completeness>[:Khop]`` (built into the cache once)."""
    return hybrid_kb(COMPLETENESS[dataset.split(":")[0].removeprefix("hybrid-")], 0, progress=True)


def run_cell(dataset: str, part: str, overrides: list[str], args: argparse.Namespace) -> dict:
    """One ``hybridrag eval`` of fusion; returns its summary (or ``{"failed": ...}``)."""
    slug = "-".join(o.replace("=", "") for o in overrides) or "default"
    out = args.runs / part / f"{dataset.replace(':', '-')}-{slug}"
    if out.exists() and not args.resume:
        shutil.rmtree(out)  # records of an earlier code version are not this run's
    limit = args.tune_limit if part == "tune" else args.limit
    argv = ["--method", "fusion", "--questions", str(question_file(dataset, part, args.runs / "questions"))]
    argv += ["--kb", str(kb_of(dataset)), "--limit", str(limit), "--out", str(out), "--no-progress"]
    argv += ["--workers", str(args.workers)]
    for o in overrides:
        argv += ["--set", o]
    sys.stderr.write(f"[fusion-ranking] {part} {dataset} {' '.join(overrides) or 'default'}\n")
    summary = eval_cell(argv)
    if "failed" in summary:
        return summary
    written = dt.datetime.fromtimestamp((out / "records.jsonl").stat().st_mtime, dt.UTC)
    return {**summary, "records_written": written.strftime("%Y-%m-%d %H:%M UTC")}


def _row(label: str, s: dict) -> str:
    if "failed" in s:
        return f"| {label} | failed: {s['failed']} |" + " |" * (len(COLUMNS) + 1) + f" `{s['command']}` |"
    m, lat = s["metrics"], s["usage"]["latency_seconds"]["total"]
    cells = " | ".join(f"{m[k]:.3f}" for k, _ in COLUMNS)
    return f"| {label} | {cells} | {s['n']} | {1000 * lat.get('p50', 0):.0f} | `{s['command']}` |"


def table(cells: dict[str, dict]) -> list[str]:
    """A markdown table of every metric per configuration."""
    names = ["configuration", *(n for _, n in COLUMNS), "n", "p50 ms", "command"]
    return table_lines(names, [_row(k, v) for k, v in cells.items()])


def verdict(cells: dict[str, dict], dataset: str) -> list[str]:
    """Where fusion's default beats every baseline on every goal metric, and where it does not."""
    if any("failed" in cells.get(k, {"failed": 1}) for k in ("fusion default", *BASELINES)):
        return [f"- {dataset}: a cell failed, no verdict."]
    d, lines = cells["fusion default"]["metrics"], []
    for b in BASELINES:
        behind = [
            f"{n} {d[k]:.3f} vs {cells[b]['metrics'][k]:.3f}"
            for k, n in COLUMNS
            if k in GOAL and not d[k] > cells[b]["metrics"][k]
        ]
        lines.append(
            f"- {dataset}: default vs {b}: "
            + ("beats it on all five." if not behind else "NOT ahead on " + "; ".join(behind) + ".")
        )
    return lines


def tune_winner(tuned: dict[str, dict[str, dict]]) -> str:
    """The scoring with the best mean of the five goal metrics over the 1-hop tune datasets."""
    hop1 = [d for d in ONE_HOP if d in tuned]

    def mean(label: str) -> float:
        vals = [tuned[d][label]["metrics"][k] for d in hop1 for k in GOAL if "metrics" in tuned[d].get(label, {})]
        return sum(vals) / max(len(vals), 1)

    return max((lbl for lbl in tuned[hop1[0]] if lbl.startswith("scoring=")), key=mean)


def uncommitted() -> str:
    """Source files that differ from the commit (modified or untracked), as the run saw them."""
    root = ROOT
    try:
        lines = subprocess.run(
            ["git", "status", "--porcelain", "--", "agents", "graphs", "tools", "kb", "evals"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return ", ".join(f"`{ln[3:]}`" for ln in lines if ln.endswith(".py")) or "none"


def render(tuned: dict, held: dict, args: argparse.Namespace, info: dict) -> str:
    """The markdown report."""
    every = [c for part in (tuned, held) for cells in part.values() for c in cells.values()]
    dates = sorted(c["records_written"] for c in every if "records_written" in c)
    ran = f"answers recorded {dates[0]} to {dates[-1]} (each cell's last record), run started {info['date']}"
    cmd = f"python -m benchmarks fusion-ranking --limit {args.limit} --tune-limit {args.tune_limit}"
    cmd += f" --workers {args.workers}"
    cmd += " --resume" if args.resume else ""
    took = f"; the whole command took {info['minutes']:.1f} min" if "minutes" in info else ""
    out = [
        HEADING,
        "",
        f"- Command: `{cmd}` (each cell's own `hybridrag eval` command is in its row){took}",
        f"- Date: {ran}; commit: `{info['commit']}` (at the start); source files that differed from it then: "
        f"{info.get('uncommitted', 'unknown')}; machine: {machine(info)}",
        "- Questions: MetaQA dev only (test splits never read), split by question id: SHA-1 of the id even → "
        "tune, odd → held-out. Choices were compared on the tune part (the first "
        f"{args.tune_limit} of a seeded shuffle (seed 0) of it per cell); every table under *Held-out* uses "
        f"the held-out part only: the first {args.limit} of a seeded shuffle (seed 0) of it per cell, the same "
        "questions for every row of a table.",
        "- KBs: MetaQA-hybrid at 100 / 50 / 0 % graph completeness (split seed 0): the held-out share of the "
        "triples is only in passages, one per head movie; 100 % is the full MetaQA KB. `:2hop` / `:3hop` ask "
        "MetaQA's 2- and 3-hop dev questions on the full KB.",
        "- Metrics as in docs/benchmarks_eval.md: R@10 (a relevant item in the top 10), MRR, nDCG@10, Hit@1, "
        "Recall@20 (share of gold answers covered by the top 20); an entity is relevant when it is a gold "
        "answer, a passage when its text names one. answer EM / Hits@1 score the `answer` field; it trails "
        "Hit@1 where the first item is a passage, which counts as relevant when it names a gold answer "
        "anywhere while the answer is read from its best-scoring sentence. p50 ms is the per-question wall "
        "time, query embedding included, on a shared 2-core machine (noisy; other runs shared it).",
        "",
        "### Held-out: fusion's default against the paper's scoring and the baselines",
        "",
    ]
    for dataset, cells in held.items():
        out += [f"#### {dataset}", "", *table(cells), ""]
    out += [
        "#### Goal check (held-out, same run): default > each baseline on R@10, MRR, nDCG@10, Hit@1, Recall@20",
        "",
        *(line for d in ONE_HOP if d in held for line in verdict(held[d], d)),
        "",
    ]
    out += [
        "### Tune part: the choices compared",
        "",
        f"Best mean of the five goal metrics over the three 1-hop settings: `{tune_winner(tuned)}` "
        "(the default in agents/fusion/context.py is `scoring=evidence`, `seed_passages=200`, `hops=1`).",
        "",
    ]
    for dataset, cells in tuned.items():
        out += [f"#### {dataset} (tune)", "", *table(cells), ""]
    return "\n".join(out)


OPTIONS = [
    arg("--limit", type=int, default=500, help="questions per held-out cell (first N of its shuffle)"),
    arg("--tune-limit", type=int, default=200, help="questions per tune cell (first N of its shuffle)"),
    arg("--workers", type=int, default=1, help="concurrent questions per cell"),
    arg("--resume", action="store_true", help="keep the records cells already hold"),
    arg("--datasets", nargs="+", help="only these settings' cells (e.g. hybrid-100); default all"),
    arg("--runs", type=Path, default=Path("eval-runs") / "fusion-ranking"),
    arg("--out", type=Path, default=DOC, help="markdown file whose ranking section is rewritten"),
]


def run(args: argparse.Namespace) -> int:
    """Run the tune and held-out cells and write the report."""
    for name in ("limit", "tune_limit", "workers"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be at least 1")
    t0, info = dt.datetime.now(dt.UTC), provenance()  # the commit the run starts from
    changed = uncommitted()
    tuned: dict[str, dict[str, dict]] = {}
    held: dict[str, dict[str, dict]] = {}
    for sink, plan, part in ((tuned, TUNE, "tune"), (held, HELD, "heldout")):
        for dataset, configs in plan:
            if args.datasets and dataset not in args.datasets:
                continue
            for label, overrides in configs.items():
                sink.setdefault(dataset, {})[label] = run_cell(dataset, part, overrides, args)
    info |= {"minutes": (dt.datetime.now(dt.UTC) - t0).total_seconds() / 60, "uncommitted": changed}
    write_section(args.out, render(tuned, held, args, info))
    sys.stderr.write(f"[fusion-ranking] wrote {args.out}\n")
    return 0
