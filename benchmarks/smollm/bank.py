"""The bank KBs of :mod:`benchmarks.smollm.matrix`: a dataset's KB plus a bank of never-evaluated dev questions.

A bank lives in its KB directory (``bank.jsonl``) and every method on that KB uses it, so the
matrix does not write one into the shared KB cache (other runs there would change). It builds a
*bank KB* instead: a directory beside the dataset's KB whose ``builds``, ``current`` and
``manifest.json`` (and ``inputs``) are links to the dataset KB's, so the graph, texts and vectors
are the same files, and whose own ``bank.jsonl`` is built with ``hybridrag bank build`` /
``bank add`` from questions ``BANK_FROM`` to ``BANK_TO`` of the seed-0 shuffle of each
``dev_<k>hop.txt`` (a cell asks the first ``--limit <= BANK_FROM`` of the same shuffle). Bank
version 1 (``smollm-bank-<kb>``) keeps every solved example; version 2 (``smollm-bank2-<kb>``, the
default) leaves out those their look-alikes outvote, as ``hybridrag bank build`` does.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

from hybridrag.evals.datasets import load_metaqa, sample

BANK_FROM, BANK_TO = 300, 1300
# 2: solved examples their look-alikes outvote are left out (agents/shots/consensus.py); 1: kept
BANK_VERSION = 2
BANK_HOPS = {
    "metaqa-1hop": (1, 2, 3),
    "metaqa-2hop": (1, 2, 3),
    "metaqa-3hop": (1, 2, 3),
    "metaqa-hybrid-50": (1,),
}  # the hybrid sets ask 1-hop questions
DONE = "smollm-bank.done"  # written once every hop's questions are in the bank
LINKS = ("builds", "current", "manifest.json", "inputs")


def source_kb(dataset: str) -> Path:
    """The dataset's own KB directory (built into the cache when missing)."""
    from hybridrag.evals import hybrid

    if dataset == "metaqa-hybrid-50":
        return Path(hybrid.hybrid_kb(hybrid.COMPLETENESS["50"], 0, False))
    return Path(hybrid.full_kb(False))


def question_lines(hops: int) -> list[str]:
    """The non-empty lines of ``dev_<hops>hop.txt`` (MetaQA format)."""
    from hybridrag.evals.hybrid import metaqa_dir

    text = (metaqa_dir() / f"dev_{hops}hop.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def bank_lines(hops: int) -> list[str]:
    """The bank's questions of one hop count: ``BANK_FROM:BANK_TO`` of the seed-0 shuffle."""
    lines = question_lines(hops)
    order = list(range(len(lines)))
    random.Random(0).shuffle(order)
    return [lines[i] for i in order[BANK_FROM:BANK_TO]]


def _link_kb(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for name in LINKS:
        target, link = src / name, dst / name
        if not (target.exists() or target.is_symlink()) or link.is_symlink() or link.exists():
            continue
        link.symlink_to(target.readlink() if target.is_symlink() and name != "builds" else target.resolve())


def bank_kb(dataset: str) -> Path:
    """The bank KB of ``dataset`` (built on first use: links, then the bank from dev questions)."""
    if dataset not in BANK_HOPS:
        raise SystemExit(f"no bank KB for dataset {dataset!r}; one of {', '.join(BANK_HOPS)}")
    src = source_kb(dataset)
    dst = src.parent / (f"smollm-bank{BANK_VERSION}-{src.name}" if BANK_VERSION > 1 else f"smollm-bank-{src.name}")
    if (dst / DONE).exists():
        return dst
    _link_kb(src, dst)
    exe = shutil.which("hybridrag") or "hybridrag"
    for i, hops in enumerate(BANK_HOPS[dataset]):
        path = dst / f"bank_questions_{hops}hop.txt"  # the name tells the builder the hop count
        path.write_text("\n".join(bank_lines(hops)) + "\n", encoding="utf-8")
        cmd = (
            [exe, "bank", "build", "--kb", str(dst), "--questions", str(path)]
            if i == 0
            else [exe, "bank", "add", "--kb", str(dst), "--file", str(path)]
        )
        subprocess.run(cmd, check=True)
    (dst / DONE).write_text(
        "bank built from " + ", ".join(f"dev_{h}hop" for h in BANK_HOPS[dataset]) + "\n", encoding="utf-8"
    )
    return dst


def _plain(line_or_question: str) -> str:
    return line_or_question.split("\t")[0].replace("[", "").replace("]", "").strip().casefold()


def check_disjoint(dataset: str, limit: int) -> None:
    """Refuse a cell whose questions (the first ``limit`` of the seed-0 sample) are in its bank."""
    from hybridrag.evals.hybrid import metaqa_dir

    hops = 1 if dataset == "metaqa-hybrid-50" else int(dataset.split("-")[1][0])
    asked = {_plain(q.question) for q in sample(load_metaqa(metaqa_dir() / f"dev_{hops}hop.txt"), limit, 0)}
    banked = {_plain(line) for h in BANK_HOPS[dataset] for line in bank_lines(h)}
    shared = asked & banked
    if limit > BANK_FROM or shared:
        raise SystemExit(
            f"{dataset}: {len(shared)} evaluated questions are in the bank (limit {limit}, "
            f"bank from question {BANK_FROM}); lower --limit"
        )
