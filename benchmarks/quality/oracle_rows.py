"""The rows of the oracle report: the score a method is held to, its goal, and the two tables' rows."""

from __future__ import annotations

import json
from pathlib import Path

from hybridrag.evals.markdown import table as table_lines

ANSWERING = {"hydrarag", "ssrag"}  # scored by the answer string; the others by their ranked list
GOAL = {"metaqa-3hop": 0.85}  # share of the ceiling; 0.95 elsewhere


def score_key(method: str) -> str:
    """The metric a method is held to: answer Hits@1 for the answering methods, else Hit@1."""
    return "answer_hits@1" if method in ANSWERING else "hit@1"


def goal(dataset: str) -> float:
    """The issue's goal for a dataset, as a share of the ceiling."""
    return GOAL.get(dataset.split(":")[0], 0.95)


def ceiling_row(method: str, dataset: str, s: dict) -> str:
    """One row of the ceiling table."""
    if "failed" in s:
        return f"| {method} oracle | {dataset} | failed: {s['failed']} |" + " |" * 10 + f" `{s['command']}` |"
    m, u = s["metrics"], s["usage"]
    ceil = s.get("ceiling", {}).get("hit") or float("nan")
    score = m[score_key(method)]
    ratio = score / ceil if ceil == ceil and ceil > 0 else float("nan")
    met = "yes" if ratio >= goal(dataset) else "**no**"
    lat = u["latency_seconds"]["total"]
    return (
        f"| {method} oracle | {dataset} | {s['n']} | {m['hit@1']:.3f} | {m['mrr']:.3f} | {m['hit@5']:.3f} "
        f"| {m['recall@20']:.3f} | {m['answer_em']:.3f} | {m['answer_hits@1']:.3f} | {ceil:.3f} "
        f"| {ratio:.1%} ({score_key(method)}) | {goal(dataset):.0%}: {met} "
        f"| {u.get('llm_calls_per_question', 0):.2f} | {lat.get('p50', 0):.3f} / {lat.get('p95', 0):.3f} "
        f"| {s['errors']} | `{s['command']}` |"
    )


def noise_summary(run_dir: Path) -> dict:
    """The repair counts of a noisy run (``oracle_noise.json``), or an empty dict."""
    path = run_dir / "oracle_noise.json"
    return json.loads(path.read_text(encoding="utf-8")).get("summary", {}) if path.exists() else {}


def loop_row(method: str, dataset: str, looped: dict, single: dict, counts: dict, outcome: dict) -> str:
    """One row of the loops table."""
    if "failed" in looped or "failed" in single:
        bad = looped if "failed" in looped else single
        return f"| {method} oracle | {dataset} | failed: {bad['failed']} |" + " |" * 9 + f" `{bad['command']}` |"
    key = score_key(method)
    overall = counts.get("overall", counts)
    share = overall.get("repair_share")
    share_txt = "n/a" if share is None else f"{share:.1%}"
    met = "" if share is None else (" (goal 80 %: yes)" if share >= 0.8 else " (goal 80 %: **no**)")
    o_share = outcome.get("share")
    o_txt = "n/a" if o_share is None else f"{outcome['rescued']}/{outcome['harmful']} = {o_share:.1%}"
    by_type = ", ".join(f"{t} {c['repaired']}/{c['applied']}" for t, c in sorted(counts.get("by_type", {}).items()))
    return (
        f"| {method} oracle | {dataset} | {looped['n']} | {looped['metrics'][key]:.3f} "
        f"| {single['metrics'][key]:.3f} | {key} | {overall.get('applied', 0)} | {overall.get('looped', 0)} "
        f"| {overall.get('repaired', 0)} | {share_txt}{met} | {o_txt} | {by_type or '–'} "
        f"| {looped['usage'].get('llm_calls_per_question', 0):.2f} / "
        f"{single['usage'].get('llm_calls_per_question', 0):.2f} | `{looped['command']}` |"
    )


CEILING_HEAD = [
    "method",
    "dataset",
    "n",
    "Hit@1",
    "MRR",
    "Hit@5",
    "Recall@20",
    "answer EM",
    "answer Hits@1",
    "ceiling",
    "score / ceiling",
    "goal",
    "LLM calls / q",
    "latency p50 / p95 s",
    "errors",
    "command",
]
LOOP_HEAD = [
    "method",
    "dataset",
    "n",
    "score with loop",
    "score, max_iterations=1",
    "score",
    "errors applied",
    "followed by a later decision",
    "repaired",
    "repaired / applied",
    "harmful errors rescued by the loop",
    "by type (repaired/applied)",
    "LLM calls / q (loop / single)",
    "command (loop; the single pass adds --set max_iterations=1)",
]


def table(head: list[str], rows: list[str]) -> list[str]:
    """A markdown table and a blank line."""
    return [*table_lines(head, rows), ""]
