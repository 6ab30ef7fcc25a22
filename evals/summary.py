"""The summary of a run, computed from its ``records.jsonl`` alone, and its table and plot.

A record holds the gold keys (``gold.keys``), the gold keys covered by each ranked item
(``relevant``, in rank order), the answer and gold answer names, the reachable gold keys
(``reachable``, ``reachable_kg``; None when the dataset has no ceiling), the method's
``usage`` and the wall-clock ``seconds``. When an id appears more than once (a resumed run
retried an error), the last record counts. A question that errored scores 0 everywhere and
is counted in ``errors``.

Besides the reachable-answer ceiling, ``ceiling_evidence`` says how often the run's own
``evidence`` names some gold answer (normalised, as whole words): when Hit@1 is far below it,
the method retrieved the answer and then ranked or chose another one.

``python -m hybridrag.evals.summary RECORDS.jsonl [--json]`` prints the summary of a run's records
again (with metrics added since the run), without touching its files.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from hybridrag.evals.documents_qa import DOCUMENT_METRICS, document_scores
from hybridrag.evals.metrics import ANSWER_METRICS, RETRIEVAL_METRICS, answer_scores, normalize_answer, retrieval_scores
from hybridrag.evals.timing import stats

LABELS = {
    "hit@1": "Hit@1",
    "hit@5": "Hit@5",
    "recall@20": "Recall@20 (STaRK)",
    "recall_any@10": "R@10 (any relevant, fusion paper)",
    "mrr": "MRR",
    "ndcg@10": "nDCG@10",
    "answer_em": "Answer EM",
    "answer_f1": "Answer F1",
    "answer_hits@1": "Answer Hits@1",
    **{f"support_recall@{k}": f"Supporting-document recall@{k}" for k in (2, 5, 10)},
    **{f"support_all@{k}": f"Both supporting documents @{k}" for k in (2, 5, 10)},
    "misled": "Misled rate (planted document first, or the answer only a planted one states)",
}


def read_records(path: str | Path) -> list[dict]:
    """Records of a run, one per question id (the last one written wins)."""
    by_id: dict[str, dict] = {}
    p = Path(path)
    if not p.exists():
        return []
    with open(p, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                by_id.pop(rec["id"], None)
                by_id[rec["id"]] = rec
    return list(by_id.values())


def score_record(rec: dict) -> dict[str, float]:
    """Every metric of one record."""
    gold = rec.get("gold") or {}
    scores = retrieval_scores(rec.get("relevant") or [], gold.get("keys") or [])
    scores.update(answer_scores(rec.get("answer") or "", gold.get("answers") or []))
    scores.update(document_scores(rec))
    return scores


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = [*RETRIEVAL_METRICS, *ANSWER_METRICS]
    keys += [k for k in DOCUMENT_METRICS if rows and all(k in r for r in rows)]
    return {k: float(np.mean([r[k] for r in rows])) if rows else 0.0 for k in keys}


def _ceiling(records: list[dict], field: str) -> dict[str, float | int]:
    judged = [r for r in records if r.get(field) is not None]
    if not judged:
        return {"n": 0}
    return {
        "n": len(judged),
        "hit": float(np.mean([1.0 if r[field] else 0.0 for r in judged])),
        "recall": float(np.mean([len(r[field]) / max(len(r["gold"]["keys"]), 1) for r in judged])),
    }


def _strings(value) -> Iterable[str]:
    """Every string inside an evidence item (its text, names, path steps), nested lists and dicts included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def names_gold(evidence: list, answers: Iterable[str]) -> bool:
    """Whether some evidence item names one of ``answers`` as whole words, after normalisation."""
    golds = {g for g in (normalize_answer(a) for a in answers) if g}
    if not golds:
        return False
    text = " " + " | ".join(normalize_answer(s) for s in _strings(evidence)) + " "
    return any(f" {g} " in text for g in golds)


def _evidence_ceiling(records: list[dict]) -> dict[str, float | int]:
    judged = [r for r in records if isinstance(r.get("evidence"), list) and (r.get("gold") or {}).get("answers")]
    if not judged:
        return {"n": 0}
    return {
        "n": len(judged),
        "hit": float(np.mean([1.0 if names_gold(r["evidence"], r["gold"]["answers"]) else 0.0 for r in judged])),
    }


def _usage(records: list[dict]) -> dict:
    n = max(len(records), 1)
    counters = (
        "llm_calls",
        "input_tokens",
        "output_tokens",
        "llm_seconds",
        "parse_failures",
        "fallbacks",
        "unsupported_answers",
    )
    per_q = {f"{c}_per_question": sum(float((r.get("usage") or {}).get(c, 0)) for r in records) / n for c in counters}
    stages: dict[str, list[float]] = defaultdict(list)
    for r in records:
        for stage, secs in ((r.get("usage") or {}).get("stages") or {}).items():
            stages[stage].append(float(secs))
    latency = {"total": stats(r.get("seconds", 0.0) for r in records)}
    latency["stages"] = {s: stats(v) for s, v in sorted(stages.items())}
    return {**per_q, "latency_seconds": latency}


def summarise(records: list[dict], meta: dict | None = None) -> dict:
    """Metric means (overall and per question type), ceiling, errors and usage of a run."""
    scored = [score_record(r) for r in records]
    by_type: dict[str, list[dict]] = defaultdict(list)
    for rec, s in zip(records, scored, strict=True):
        by_type[rec.get("qtype") or "all"].append(s)
    return {
        **(meta or {}),
        "n": len(records),
        "errors": sum(1 for r in records if r.get("error")),
        "metrics": _means(scored),
        "by_qtype": {t: {"n": len(rows), **_means(rows)} for t, rows in sorted(by_type.items())},
        "ceiling": _ceiling(records, "reachable"),
        "ceiling_kg": _ceiling(records, "reachable_kg"),
        "ceiling_evidence": _evidence_ceiling(records),
        "usage": _usage(records),
    }


def summarise_file(path: str | Path, meta: dict | None = None) -> dict:
    """:func:`summarise` over a ``records.jsonl`` file."""
    return summarise(read_records(path), meta)


def to_markdown(summary: dict) -> str:
    """A markdown report: metrics with ceiling, per question type, usage and latency."""
    m, c = summary["metrics"], summary.get("ceiling", {})
    title = " / ".join(str(summary[k]) for k in ("method", "dataset") if summary.get(k)) or "run"
    lines = [
        f"## {title}",
        "",
        f"n = {summary['n']}, errors = {summary['errors']}",
        "",
        "| metric | value |",
        "|---|---|",
    ]
    lines += [f"| {LABELS[k]} | {v:.3f} |" for k, v in m.items()]
    if c.get("n"):
        lines.append(f"| ceiling: some gold answer reachable | {c['hit']:.3f} |")
        lines.append(f"| ceiling: gold answers reachable (recall) | {c['recall']:.3f} |")
    ckg = summary.get("ceiling_kg", {})
    if ckg.get("n"):
        lines.append(f"| ceiling in the KB graph alone | {ckg['hit']:.3f} |")
    cev = summary.get("ceiling_evidence", {})
    if cev.get("n"):
        lines.append(f"| some gold answer named in the run's evidence | {cev['hit']:.3f} |")
    keys = ("hit@1", "recall_any@10", "mrr", "ndcg@10")
    lines += [
        "",
        "| question type | n | " + " | ".join(LABELS[k] for k in keys) + " |",
        "|---|---|" + "---|" * len(keys),
    ]
    for t, row in summary["by_qtype"].items():
        lines.append(f"| {t} | {row['n']} | " + " | ".join(f"{row[k]:.3f}" for k in keys) + " |")
    u = summary["usage"]
    lines += [
        "",
        f"LLM calls / question: {u['llm_calls_per_question']:.2f}; tokens / question: "
        f"{u['input_tokens_per_question']:.0f} in, {u['output_tokens_per_question']:.0f} out; "
        f"unparseable replies / question: {u['parse_failures_per_question']:.2f}, "
        f"fallbacks taken / question: {u['fallbacks_per_question']:.2f}",
        "",
        "| stage | n | p50 s | p95 s |",
        "|---|---|---|---|",
    ]
    lat = u["latency_seconds"]
    for stage, p in [("total", lat["total"]), *lat["stages"].items()]:
        if p.get("n"):
            lines.append(f"| {stage} | {p['n']} | {p['p50']:.3f} | {p['p95']:.3f} |")
    return "\n".join(lines) + "\n"


def plot(summary: dict, path: str | Path) -> None:
    """Save a bar chart of the metric means, with the ceiling as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summary["metrics"])
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.barh([LABELS[k] for k in names], [summary["metrics"][k] for k in names], color="#4477aa")
    ceiling = summary.get("ceiling", {})
    if ceiling.get("n"):
        ax.axvline(ceiling["hit"], color="#cc3311", linestyle="--", label="reachable-answer ceiling")
        ax.legend(loc="lower right")
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    title = " / ".join(str(summary[k]) for k in ("method", "dataset") if summary.get(k))
    ax.set_title(f"{title} (n = {summary['n']})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Print the summary of a run's records (markdown, or JSON with ``--json``)."""
    p = argparse.ArgumentParser(prog="python -m hybridrag.evals.summary", description=main.__doc__)
    p.add_argument("records", type=Path, help="a run's records.jsonl")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = p.parse_args(argv)
    if not args.records.is_file():
        raise SystemExit(f"no records file at {args.records}")
    records = read_records(args.records)
    if not records:
        raise SystemExit(f"{args.records} holds no records")
    run = args.records.parent / "run.json"  # the run's method and dataset, for the title
    meta = json.loads(run.read_text(encoding="utf-8")) if run.is_file() else {}
    summary = summarise(records, {k: meta[k] for k in ("method", "dataset") if meta.get(k)})
    sys.stdout.write((json.dumps(summary, indent=2) if args.json else to_markdown(summary).rstrip("\n")) + "\n")


if __name__ == "__main__":
    main()
