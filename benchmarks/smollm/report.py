"""The report of :mod:`benchmarks.smollm.matrix` (``docs/benchmarks_smollm.md``), from the cells' records.

Per cell: ``n`` (questions with a record: a cell stopped early says so), Hit@1 and MRR of the
ranked list, answer Hits@1, how often the run's own evidence names a gold answer (Hit@1 far below
it: the answer was retrieved, then another one ranked first), the router's / planner's first
relation path against the gold path of the question's type, LLM calls per question, the p50 of
a question's seconds per LLM call (its LLM seconds over its LLM calls), the p50 / p95 of the
question latency, fallbacks, the load average at the cell's start and end, and the commit the
cell ran on (its ``summary.json``; a resumed cell names the commit of its last part).

A cell's row comes from the first runs folder that holds its records: the matrix's ``--runs``,
then older folders (``--older-runs``: e.g. runs made before a prompt change, which the commit
column tells apart).
"""

from __future__ import annotations

import json
from pathlib import Path

from hybridrag.evals.markdown import header, table, write_page
from hybridrag.evals.metaqa import relation_path
from hybridrag.evals.summary import read_records, summarise
from hybridrag.evals.timing import percentile

GOALS = {"1hop": 0.8, "2hop": 0.6}  # the goals of hybgrag and mor Hit@1 with the bank
PATH_GOAL, CALL_P50_GOAL = 0.9, 3.0


def first_path(rec: dict) -> list[str] | None:
    """The relation path of the first routing, planning or question-analysis decision, or None.

    Routing for HybGRAG, planning for MoR, the skyline's relation words for HydraRAG.
    """
    from hybridrag.agents.hydrarag.analysis import split_chain

    for step in rec.get("trace", []):
        if step.get("node") == "analyze_question":
            skyline = str(step.get("decision", "")).split(": ", 1)[-1]
            return [r.replace(" ", "_") for r in split_chain(skyline)[1::2]]
        if step.get("node") == "route_question":
            return list(step.get("relations") or [])
        if step.get("node") == "plan_question":
            routes = (step.get("raw") or {}).get("routes") or []
            if not routes:
                return []
            return [n.get("relation") or "" for n in routes[0].get("nodes", [])[1:]]
    return None


def path_correct(rec: dict, path: list[str]) -> bool:
    """Whether ``path`` is the gold path of the record's question type.

    HybGRAG lists each relation once, so a path equal to the gold path without repeats counts too.
    """
    gold = relation_path(rec["qtype"])
    return path == gold or path == list(dict.fromkeys(gold))


def path_accuracy(records: list[dict]) -> tuple[float, int] | None:
    """Share of records whose first path is the gold one, and how many had a path and a type."""
    judged = [(rec, first_path(rec)) for rec in records if rec.get("qtype")]
    judged = [(rec, p) for rec, p in judged if p is not None]
    if not judged:
        return None
    return sum(path_correct(rec, p) for rec, p in judged) / len(judged), len(judged)


def call_seconds_p50(records: list[dict]) -> float | None:
    """p50 over questions with LLM calls of their seconds per call."""
    per = [r["usage"]["llm_seconds"] / r["usage"]["llm_calls"] for r in records if r.get("usage", {}).get("llm_calls")]
    return percentile(per, 50, "midpoint") if per else None


def _share(ceiling: dict) -> str:
    return f"{ceiling['hit']:.1%}" if ceiling.get("n") else "–"


def cell_row(cell: tuple[str, str, str], folder: Path, limit_note: str = "", first: int | None = None) -> str:
    """One table row of a cell (``not run`` when it has no records).

    With ``first``, the row comes from its first ``first`` records (the first questions asked).
    """
    method, setting, key = cell
    path = folder / "records.jsonl"
    records = read_records(path) if path.exists() else []
    records = records[:first] if first else records
    if not records:
        return f"| {method} | {setting} | {key} | not run |" + " |" * (len(HEAD) - 4)
    s = summarise(records)
    m, u = s["metrics"], s["usage"]
    note = json.loads((folder / "cell.json").read_text(encoding="utf-8")) if (folder / "cell.json").exists() else {}
    summary = folder / "summary.json"
    commit = json.loads(summary.read_text(encoding="utf-8")).get("commit", "?") if summary.exists() else "(unfinished)"
    acc = path_accuracy(records)
    acc_txt = "–" if acc is None else f"{acc[0]:.1%}" + ("" if acc[0] >= PATH_GOAL else " (<90 %)")
    call = call_seconds_p50(records)
    call_txt = "–" if call is None else f"{call:.2f}"
    goal = GOALS.get(key) if method in ("hybgrag", "mor") and setting == "bank" else None
    met = "" if goal is None else ("yes" if m["hit@1"] >= goal else "**no**")
    hit = f"{m['hit@1']:.3f}" + ("" if goal is None else f" (goal ≥ {goal:.1f}: {met})")
    lat = u.get("latency_seconds", {}).get("total", {})
    run = json.loads((folder / "run.json").read_text(encoding="utf-8")) if (folder / "run.json").exists() else {}
    setting += " (v2)" if "smollm-bank2-" in str(run.get("kb", "")) else ""
    load = f"{note.get('load_start', '?')} → {note.get('load_end', '?')}" if note else "(unfinished)"
    return (
        f"| {method} | {setting} | {key} | {s['n']}{limit_note} | {hit} | {m['mrr']:.3f} "
        f"| {m['answer_hits@1']:.3f} | {_share(s['ceiling_evidence'])} | {acc_txt} "
        f"| {u.get('llm_calls_per_question', 0):.2f} | {call_txt} "
        f"| {lat.get('p50', 0):.1f} / {lat.get('p95', 0):.1f} | {u.get('fallbacks_per_question', 0):.2f} "
        f"| {s['errors']} | {load} | `{commit}` |"
    )


HEAD = [
    "method",
    "examples",
    "dataset",
    "n",
    "Hit@1",
    "MRR",
    "answer Hits@1",
    "gold in evidence",
    "first path = gold",
    "LLM calls / q",
    "s per LLM call, p50",
    "question s p50 / p95",
    "fallbacks / q",
    "errors",
    "load avg (1/5/15 min) start → end",
    "commit",
]


INTRO = [
    "Every row is a real run of `local:smollm2` (SmolLM2-135M-Instruct GGUF through llama.cpp, grammar-"
    "constrained output where the role supports it; judging roles by rule, `judge=auto`). No oracle.",
    "",
    "- Questions: the first n of MetaQA dev's seed-0 shuffle (the same questions for every cell of a"
    " dataset). Examples: *bank* = nearest solved examples, entity masked, from a bank of 1000 dev questions"
    " per hop count (questions 300-1300 of the same shuffle, never evaluated; `benchmarks/smollm/bank.py`);"
    " *schema* = the same retrieval over schema-synthesized examples only (bank off); *fixed* = the bundled"
    " MetaQA example files; *none* = no examples. *bank (v2)*: the bank without the solved examples their"
    " look-alikes outvote (`agents/shots/consensus.py`); plain *bank*: every solved example kept.",
    "- *First path = gold*: the relation path of the router's (HybGRAG), planner's (MoR) or question"
    " analysis's (HydraRAG: its skyline) first decision equals the gold path of the question's type"
    " (`evals/metaqa.relation_path`; HybGRAG lists each relation once). *s per LLM call*: the"
    " median over questions of LLM seconds / LLM calls. *Gold in evidence*: the share of questions whose"
    " run's own evidence names a gold answer (`evals/summary.py`); Hit@1 far below it means the answer"
    " was retrieved and another one ranked first.",
    "- Goals (issue 11): with the bank, hybgrag and mor Hit@1 ≥ 0.8 (1-hop), ≥ 0.6 (2-hop); first path ="
    " gold ≥ 90 % at every hop; LLM-call p50 < 3 s.",
    "",
]


def held(cell: tuple[str, str, str], runs: list[Path]) -> list[Path]:
    """The folders of ``cell`` in every one of ``runs`` that holds its records."""
    folders = [r / "-".join(cell) for r in runs]
    return [f for f in folders if (f / "records.jsonl").exists() and (f / "records.jsonl").stat().st_size]


def cell_folder(cell: tuple[str, str, str], runs: list[Path]) -> Path:
    """The folder of ``cell`` in the first of ``runs`` that holds its records (else in the first)."""
    return (held(cell, runs) or [runs[0] / "-".join(cell)])[0]


def render(
    out: Path,
    runs: Path | list[Path],
    cells: list[tuple[str, str, str]],
    info: dict,
    argv: list[str],
    notes: list[str] | None = None,
    first: int | None = None,
    every: bool = False,
) -> None:
    """Write the report for ``cells`` (in their order) from the run folders under ``runs``.

    ``runs`` is one folder, or several: each cell from the first that holds its records; with
    ``every``, a row from each, its folder named beside n. ``first``: each row from its first
    ``first`` records, so that runs of one cell compare on the same questions.
    """
    runs = [runs] if isinstance(runs, Path) else list(runs)
    if every:
        rows = [
            cell_row(c, f, f" ({f.parent.name})", first) for c in cells for f in held(c, runs) or [cell_folder(c, runs)]
        ]
    else:
        rows = [cell_row(c, cell_folder(c, runs), first=first) for c in cells]
    text = "\n".join(
        [
            *header(
                "SmolLM2-135M on the LLM methods: bank on and off",
                " ".join(["python -m benchmarks smollm", *argv]),
                info,
                [
                    "The commit is the report's; each row names its own. The machine is shared with other jobs"
                    " (load average per row). Each cell's own `hybridrag eval` command is in its folder's"
                    " `cell.json` / `summary.json`."
                ],
            ),
            *INTRO,
            *table(HEAD, rows),
            "",
            *(["## Notes", "", *(f"- {n}" for n in notes), ""] if notes else []),
        ]
    )
    write_page(out, [text])
