"""docs/benchmarks_fidelity.md: the realistic stand-in's rates, then every fidelity row's two cells."""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchmarks.fidelity.rows import Row
from hybridrag.evals.markdown import provenance
from hybridrag.evals.oracle.noise import ERROR_TYPES
from hybridrag.evals.oracle.rates import FOLDER

RATES = FOLDER / "smollm2.json"
ANCHOR = "the-rows"  # the heading "The rows" (linked from docs/architecture.md's fidelity table)


def _summary(folder: Path, limit: int) -> dict | None:
    path = folder / "summary.json"
    if not path.exists():
        return None
    s = json.loads(path.read_text(encoding="utf-8"))
    return s if s.get("n", 0) >= limit else None


def _noise(folder: Path) -> dict:
    path = folder / "oracle_noise.json"
    return json.loads(path.read_text(encoding="utf-8"))["summary"] if path.exists() else {}


def rates_section() -> list[str]:
    """The rates table: per method, all hops and each hop count."""
    data = json.loads(RATES.read_text(encoding="utf-8"))
    lines = [
        "## The rates (`evals/oracle/rates/smollm2.json`)",
        "",
        f"Measured by `{data['command']}` at commit {data['commit']}, {data['date']}: {data['what']}. "
        "Unclassified decisions (an error no noise type describes) are counted, not drawn. Each hop count "
        "has n = 40 a method: a rate of 0 there says only that the rate is likely below 3/40 = 0.075 "
        "(the rule of three, 95 %). SSRAG's first decision is an LLM call only when the question names more "
        "than one KB entity (last column); otherwise its rule decides.",
        "",
        "| method | hops | n | correct | " + " | ".join(ERROR_TYPES) + " | unclassified | decided by an LLM call |",
        "|---|---|---|---|" + "---|" * len(ERROR_TYPES) + "---|---|",
    ]
    for method, cells in data["methods"].items():
        for hops, t in [("all", cells["all"]), *cells["by_hops"].items()]:
            c = t["counts"]
            rates = " | ".join(f"{t['rates'][e]:.3f}" if e in t["rates"] else "0" for e in ERROR_TYPES)
            lines.append(
                f"| {method} | {hops} | {t['n']} | {c.get('correct', 0)} | {rates} | {t['unclassified']} "
                f"| {t['decided_with_llm_call']} |"
            )
    return [*lines, ""]


def cell_line(r: Row, dataset: str, setting: str, runs: Path, limit: int) -> str:
    """One cell's row of the table (``not run`` when it has no finished summary)."""
    from benchmarks.fidelity.main import cell_name

    name = cell_name(r.method, dataset, setting)
    shown = f"`{setting}`" if setting else "default"
    s = _summary(runs / name, limit)
    if s is None:
        return f"| {r.key} | {dataset} | {shown} | not run | | | | | {name} |"
    m, n = s["metrics"], _noise(runs / name)
    calls = (s.get("usage") or {}).get("llm_calls_per_question")
    calls = f"{calls:.2f}" if isinstance(calls, int | float) else "—"
    return (
        f"| {r.key} | {dataset} | {shown} | {s['n']} | {m['hit@1']:.3f} | {m['answer_hits@1']:.3f} "
        f"| {n.get('drawn', '—')} / {n.get('applied', '—')} / {n.get('repaired', '—')} | {calls} "
        f"| {name} ({s['commit']}) |"
    )


def baseline_section(rows: list[Row], runs: Path, limit: int) -> list[str]:
    """The defaults under the realistic and the perfect stand-in, side by side."""
    from benchmarks.fidelity.main import PERFECT, baselines, cell_name

    lines = [
        "## Baseline: the perfect stand-in at the defaults",
        "",
        "The same questions at the same commit with `--llm oracle` (no error drawn), against the realistic "
        "stand-in's default cell: what SmolLM2-level first-decision errors cost after the corrective loops.",
        "",
        "| method | dataset | n | Hit@1 perfect | Hit@1 realistic | answer Hits@1 perfect | answer Hits@1 realistic "
        "| errors drawn / applied / repaired |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, dataset, _, _ in baselines(rows):
        p = _summary(runs / cell_name(method, dataset, "", PERFECT), limit)
        q = _summary(runs / cell_name(method, dataset, ""), limit)
        if p is None or q is None:
            lines.append(f"| {method} | {dataset} | not run | | | | | |")
            continue
        n = _noise(runs / cell_name(method, dataset, ""))
        errors = " / ".join(str(n.get(k, "—")) for k in ("drawn", "applied", "repaired"))
        pm, qm = p["metrics"], q["metrics"]
        lines.append(
            f"| {method} | {dataset} | {p['n']} | {pm['hit@1']:.3f} | {qm['hit@1']:.3f} | {pm['answer_hits@1']:.3f} "
            f"| {qm['answer_hits@1']:.3f} | {errors} |"
        )
    return [*lines, ""]


def pairs(r: Row, runs: Path, limit: int) -> list[tuple[str, dict | None, dict | None, bool]]:
    """Per dataset of ``r``: the default and paper-setting summaries (None: not run), and whether noise was drawn."""
    from benchmarks.fidelity.main import cell_name

    return [
        (
            d,
            _summary(runs / cell_name(r.method, d, ""), limit),
            _summary(runs / cell_name(r.method, d, r.paper), limit),
            bool(_noise(runs / cell_name(r.method, d, "")).get("drawn", 1)),
        )
        for d in r.datasets
    ]


def verdict(r: Row, runs: Path, limit: int) -> str:
    """The row's outcome on its metric, per dataset: which setting is better, by how much."""
    parts = []
    for d, a, b, drawn in pairs(r, runs, limit):
        if a is None or b is None:
            parts.append(f"{d}: not run")
            continue
        x, y = a["metrics"][r.metric], b["metrics"][r.metric]
        who = "the paper's setting" if not r.default_is_paper else f"`{r.paper}`"
        if abs(x - y) < 0.5 / a["n"]:
            text = "equal"
        elif x > y:
            text = f"the default is better by {x - y:.3f}"
        else:
            text = f"{who} is better by {y - x:.3f}" + (
                "" if r.default_is_paper else " (**reverses the default's advantage**)"
            )
        if not drawn:
            text += " (no error drawn: SmolLM2's rate at this hop count is 0, so both equal the perfect stand-in)"
        parts.append(f"{d}: {r.metric} {x:.3f} (default) vs {y:.3f} (`{r.paper}`): {text}")
    return f"- **{r.key}** ({r.component}): " + "; ".join(parts)


def not_run_section(rows: list[Row], runs: Path, limit: int) -> list[str]:
    """The rows without finished cells, and which methods draw no error on 1-hop questions."""
    from benchmarks.fidelity.main import cell_name, cells_of

    missing = [r.key for r in rows if any(_summary(runs / cell_name(*c), limit) is None for c in cells_of(r))]
    if not missing:
        return []
    data = json.loads(RATES.read_text(encoding="utf-8"))["methods"]
    quiet = [m for m, v in data.items() if not v["by_hops"].get("1", {}).get("rates", {"x": 1})]
    return [
        "## Not run",
        "",
        f"{', '.join(missing)}: no finished cells (the run stopped at `--stop-at`, or was not asked for). "
        f"SmolLM2 made no first-decision error on the 40 1-hop questions for {', '.join(quiet) or 'no method'}, "
        "so on 1-hop questions (MetaQA 1-hop, the MetaQA-hybrid sets) the realistic stand-in draws no error "
        "for those methods: their cells there equal the perfect stand-in's at the same commit.",
        "",
    ]


def render(rows: list[Row], runs: Path, limit: int, cmd: str, failed: dict[str, str] | None = None) -> str:
    """The whole page."""
    info = provenance()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "# Paper-fidelity rows under the realistic stand-in",
        "",
        f"Command: `{cmd}` (rewrites this page; the rates by `python -m benchmarks realistic-rates`)",
        f"Date: {info['date']}, commit {info['commit']}, {info['machine']['cores']} cores, no GPU; "
        f"load average at writing {load} (a shared machine).",
        "",
        "The realistic stand-in (`--llm oracle:realistic`) is the perfect-LLM stand-in with each question's first "
        "decision (router, planner, analysis, entity extraction) made wrong in one of the noise types with the "
        "rate SmolLM2-135M showed on MetaQA dev for that method and hop count (table below), instead of a "
        "perfect model (`oracle`) or a uniform type at one probability (`oracle:p=0.3`). Every later role "
        "is still perfect, so a row shows what the machinery (retrieval, the corrective loops) does "
        "with a first decision as imperfect as SmolLM2's, not what SmolLM2 scores end to end. Each row of "
        'docs/architecture.md "Paper fidelity: every component" that is "ours" with a default-vs-paper '
        f"measurement runs twice, one setting changed, on the first {limit} questions of the seed-0 "
        "shuffle of the row's dataset (the questions of its stand-in figure).",
        "",
        "What the rates stand for: SmolLM2 at the defaults with a bank of solved MetaQA dev questions held "
        "out from the measured ones. MetaQA's questions are templated and the bank's nearest example of a "
        "templated question is usually the same template with another entity, so SmolLM2 copies a right "
        "decision most of the time; on freely worded questions the bank matches far less often (the "
        "realdata page's paraphrase section), and these rates would be an underestimate there.",
        "",
        *rates_section(),
        "## The rows",
        "",
        "Hit@1 ranks the method's items; answer Hits@1 is the answer field (SSRAG and HydraRAG answer in "
        "text, so their rows are judged on it). Errors: the questions whose first decision the realistic "
        "stand-in drew an error for, the decisions that carried it (a role the setting skips carries none; a "
        "repeated role may carry it later) and those a later decision repaired. Code: the commit each cell "
        "ran at; `-dirty`: other engineers' uncommitted files in the shared checkout at that time.",
        "",
        "| row | dataset | setting | n | Hit@1 | answer Hits@1 | errors drawn / applied / repaired | LLM calls / q "
        "| cell (code) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    from benchmarks.fidelity.main import cells_of

    lines += [cell_line(r, d, s, runs, limit) for r in rows for (_, d, s) in cells_of(r)]
    lines += ["", *baseline_section(rows, runs, limit)]
    lines += ["## Verdicts", "", *[verdict(r, runs, limit) for r in rows], ""]
    lines += [f"- cell {name} failed: {why}" for name, why in (failed or {}).items()]
    lines += not_run_section(rows, runs, limit)
    lines += [
        "fusion's rows call no LLM, so the stand-in changes nothing in them (not run).",
        "",
    ]
    return "\n".join(lines)
