"""The page of ``python -m benchmarks smollm-hops``: seconds per question per hop, new settings against the baseline."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from hybridrag.evals.markdown import header, table
from hybridrag.evals.timing import percentile

GOAL_S = 2.0  # issue 31: question p50 under 2 s at every hop


def _p(values: list[float], pct: float) -> float:
    return percentile(values, pct) if values else 0.0


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def groups(rows: list[dict]) -> dict[tuple[str, int, str], list[dict]]:
    """The runs by (method, hops, variant), in the order they first ran."""
    out: dict[tuple[str, int, str], list[dict]] = defaultdict(list)
    for r in rows:
        out[(r["method"], r["hops"], r["variant"])].append(r)
    return out


def speed_row(key: tuple[str, int, str], runs: list[dict]) -> list[object]:
    """One table row: question seconds, calls, Hit@1 and llama.cpp's counters per question."""
    method, hops, variant = key
    seconds = [r["seconds"] for r in runs]
    p50 = _p(seconds, 50)
    goal = "yes" if p50 < GOAL_S else "no"
    per_q = {k: _mean([r[k] for r in runs]) for k in ("evaluated", "prompt_tokens", "prompt_ms", "gen_ms", "other_ms")}
    return [
        method,
        f"{hops}-hop",
        variant,
        len(runs),
        f"**{p50:.2f}** ({goal})" if variant == "new" else f"{p50:.2f}",
        f"{_p(seconds, 95):.2f}",
        f"{_p([r.get('cpu_s', 0.0) for r in runs], 50):.2f}",
        f"{_mean([r['usage'].get('llm_calls', 0) for r in runs]):.2f}",
        f"{_mean([r['hit@1'] for r in runs]):.3f}",
        f"{per_q['evaluated']:.0f} / {per_q['prompt_tokens']:.0f}",
        f"{per_q['prompt_ms']:.0f}",
        f"{per_q['gen_ms']:.0f}",
        f"{per_q['other_ms']:.0f}",
        sum(1 for r in runs if r["error"]),
        draft_cell(runs),
    ]


def draft_cell(runs: list[dict]) -> str:
    """Draft tokens kept / proposed per LLM call (speculative decoding), or a dash without drafts."""
    calls = sum(r.get("llama_calls", 0) for r in runs)
    drafted = sum(r.get("drafted", 0) for r in runs)
    if not calls or not drafted:
        return "–"
    return f"{sum(r.get('accepted', 0) for r in runs) / calls:.1f} / {drafted / calls:.1f}"


def same_texts(rows: list[dict]) -> tuple[int, int]:
    """(LLM calls whose reply text was the same in both runs of a question, calls compared).

    Calls pair up by their order in the question; a question whose runs made different numbers of
    calls compares its shorter list.
    """
    by_q: dict[tuple[str, int, str], dict[str, list[str]]] = defaultdict(dict)
    for r in rows:
        by_q[(r["method"], r["hops"], r["id"])][r["variant"]] = r.get("texts", [])
    pairs = [pair for v in by_q.values() if len(v) == 2 for pair in zip(v["new"], v["baseline"], strict=False)]
    return sum(1 for a, b in pairs if a == b), len(pairs)


def role_rows(rows: list[dict]) -> list[list[object]]:
    """Per method, hop and role (new settings): calls a question, tokens and seconds a call."""
    acc: dict[tuple[str, int, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    questions: dict[tuple[str, int], int] = defaultdict(int)
    for r in rows:
        if r["variant"] != "new":
            continue
        questions[(r["method"], r["hops"])] += 1
        for role, u in (r["usage"].get("by_role") or {}).items():
            a = acc[(r["method"], r["hops"], role)]
            a[0] += u.get("llm_calls", 0)
            a[1] += u.get("input_tokens", 0)
            a[2] += u.get("output_tokens", 0)
            a[3] += u.get("llm_seconds", 0.0)
    out = []
    for (method, hops, role), (calls, tin, tout, secs) in sorted(acc.items()):
        c = max(calls, 1)
        out.append(
            [
                method,
                f"{hops}-hop",
                role,
                f"{calls / questions[(method, hops)]:.2f}",
                f"{tin / c:.0f}",
                f"{tout / c:.1f}",
                f"{secs / c:.2f}",
            ]
        )
    return out


def same_answers(rows: list[dict]) -> tuple[int, int]:
    """(questions whose two runs got the same Hit@1, questions run both ways)."""
    by_q: dict[tuple[str, int, str], dict[str, float]] = defaultdict(dict)
    for r in rows:
        by_q[(r["method"], r["hops"], r["id"])][r["variant"]] = r["hit@1"]
    both = [v for v in by_q.values() if len(v) == 2]
    return sum(1 for v in both if v["new"] == v["baseline"]), len(both)


def write_report(
    out: Path, rows: list[dict], copies: dict, info: dict, cmd: str, load: str, variants: dict[str, str]
) -> None:
    """Write the page: the speed table, the roles, the state copies, and what the columns mean."""
    same, both = same_answers(rows)
    lines = header(
        "SmolLM2 seconds per question per hop (suite `smollm-hops`)",
        cmd,
        info,
        [
            f"Load average (1/5/15 min) start → end: {load}; the machine's 2 cores were shared with other jobs.",
            "Variants: " + "; ".join(f"**{k}**: {v}" for k, v in variants.items()) + ".",
            f"Goal (issue 31): question p50 < {GOAL_S:g} s at every hop; (yes/no) on the new rows.",
        ],
    )
    head = [
        "method",
        "hops",
        "variant",
        "n",
        "question s p50",
        "p95",
        "CPU s p50",
        "LLM calls / q",
        "Hit@1",
        "evaluated / prompt tokens per q",
        "prompt ms / q",
        "generation ms / q",
        "other ms / q",
        "errors",
        "draft tokens kept / proposed per call",
    ]
    lines += table(head, [speed_row(k, v) for k, v in sorted(groups(rows).items())])
    lines += [
        "",
        f"Both variants scored the same Hit@1 on {same} of {both} question runs (same greedy picks expected);",
        "the same reply text on {} of {} LLM calls (paired by their order in the question).".format(*same_texts(rows)),
        "",
        "*evaluated / prompt tokens*: prompt tokens llama.cpp evaluated, of all prompt tokens (the rest were reused",
        "from the previous prompt or restored from the RAM prompt cache). *other ms*: each call's wall time less",
        "prompt evaluation and generation: grammar, prompt-cache saves and restores, Python. *Draft tokens*:"
        " speculative decoding's proposed tokens a call kept (the",
        "batches checking drafts count as generation). Counters are summed",
        "over a question's calls and averaged over questions; seconds are whole questions (retrieval included).",
        "*CPU s*: this process's CPU time over the question, all threads (llama.cpp runs 2, whose waits may spin):",
        "it depends on the machine's load far less than the wall time does, but it is not an idle machine's wall time.",
        "",
        "## Roles (new settings)",
        "",
    ]
    lines += table(
        ["method", "hops", "role", "calls / q", "input tokens / call", "output tokens / call", "s / call"],
        role_rows(rows),
    )
    lines += ["", "## One prompt-cache state: save and restore (medians of 3, after the untimed warm-up questions)", ""]
    lines += table(
        ["variant", "tokens in context", "state MB", "save ms", "restore ms"],
        [[v, c["tokens"], c["mb"], c["save_ms"], c["load_ms"]] for v, c in copies.items()],
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
