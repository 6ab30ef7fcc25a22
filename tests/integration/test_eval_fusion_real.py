"""`hybridrag eval --method fusion` for real (MiniLM, FAISS, the bundled KB) on a small MetaQA-format
file: the summary it writes equals a recomputation from its own per-question records."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from hybridrag.app.cli import main

pytestmark = pytest.mark.integration
SAMPLE_TRIPLES = Path(__file__).parents[2] / "kb" / "sample" / "triples.txt"


def _metaqa_file(path: Path, n: int = 12) -> int:
    """Write n 'who directed [movie]' questions in MetaQA's format, gold = the sample KB's directors."""
    directors: dict[str, list[str]] = defaultdict(list)
    for line in SAMPLE_TRIPLES.read_text(encoding="utf-8").splitlines():
        head, rel, tail = line.split("|")
        if rel == "directed_by":
            directors[head].append(tail)
    movies = sorted(directors)[:n]
    path.write_text("".join(f"who directed [{m}]\t{'|'.join(directors[m])}\n" for m in movies), encoding="utf-8")
    return len(movies)


def _recompute(records: list[dict]) -> dict[str, float]:
    """Hit@1, Hit@5, MRR, R@10 (any), Recall@20 and answer EM written out from their definitions."""
    n = len(records)
    out = dict.fromkeys(("hit@1", "hit@5", "mrr", "recall_any@10", "recall@20", "answer_em"), 0.0)
    for r in records:
        rel, gold = r["relevant"], set(r["gold"]["keys"])
        ranks = [i for i, covered in enumerate(rel, 1) if covered]
        out["hit@1"] += 1.0 if ranks and ranks[0] == 1 else 0.0
        out["hit@5"] += 1.0 if ranks and ranks[0] <= 5 else 0.0
        out["mrr"] += 1.0 / ranks[0] if ranks else 0.0
        out["recall_any@10"] += 1.0 if ranks and ranks[0] <= 10 else 0.0
        out["recall@20"] += len({k for covered in rel[:20] for k in covered} & gold) / len(gold)
        answer = " ".join(r["answer"].lower().split())
        out["answer_em"] += 1.0 if any(answer == " ".join(g.lower().split()) for g in r["gold"]["answers"]) else 0.0
    return {k: v / n for k, v in out.items()}


def test_fusion_eval_summary_matches_its_records(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HYBRIDRAG_CACHE", str(tmp_path / "cache"))
    questions = tmp_path / "dev_1hop.txt"
    n = _metaqa_file(questions)
    out = tmp_path / "run"
    argv = ["eval", "--method", "fusion", "--questions", str(questions), "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    assert "records and summary in" in capsys.readouterr().out
    records = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == len(records) == n and summary["errors"] == 0
    assert (out / "summary.md").exists() and (out / "summary.png").stat().st_size > 0
    for metric, value in _recompute(records).items():
        assert summary["metrics"][metric] == pytest.approx(value), metric
    # the records are what the metrics say: the directors are retrieved for most questions
    assert summary["metrics"]["recall@20"] >= 0.5
    for r in records:
        assert r["ranked"] and len(r["relevant"]) == len(r["ranked"]) and r["seconds"] > 0
        assert all(math.isfinite(item["score"]) for item in r["ranked"])
    # running the same command again resumes: nothing is re-asked, the summary is unchanged
    assert main(argv) == 0
    again = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert again["metrics"] == summary["metrics"] and again["resumed"] == n
