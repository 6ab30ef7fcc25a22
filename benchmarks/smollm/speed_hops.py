"""``python -m benchmarks smollm-hops``: SmolLM2 seconds per question at 1/2/3 hops, settings against a baseline.

Each LLM method (HybGRAG, MoR, HydraRAG, SSRAG, with the examples of the ``smollm`` suite's
``bank`` cells) answers held-out MetaQA dev questions with ``local:smollm2``, twice: once with
the current model settings and once with a baseline's (``--baseline``, :data:`BASELINES`), both loaded
in this one process. The two runs of a question follow each other, their order alternating from
one question to the next, and the methods and hops take turns too, so a change in the machine's
load falls on both sides alike.

Rounds: question ``i`` of every hop count, then question ``i + 1``; the page is rewritten after
each round, so a run stopped early (``--stop-at``) has as many questions at each hop.

Held-out questions: ``--offset`` onwards (default 1300) of the seed-0 shuffle of each
``dev_<k>hop.txt``, past the questions the ``smollm`` suite evaluates (0-299) and the bank's
(300-1299); a question whose text is in the bank is skipped. The KB is the bank KB of
:mod:`benchmarks.smollm.bank`. One more held-out question per hop is asked first by every method
and variant, untimed (the first question of a process loads the models and indexes).

Besides the graph's own usage record (LLM calls and seconds per role), llama.cpp's counters are
read around each call (:class:`benchmarks.smollm.speed.Counter`): prompt tokens, the tokens
evaluated (the others came from the previous prompt or the RAM prompt cache), prompt and
generation milliseconds, and the rest of the call (grammar, prompt-cache copies, Python); and the
process's CPU seconds over the question (all its threads: the work done, which the machine's load
changes far less than the wall time). The
report (:mod:`benchmarks.smollm.speed_report`) goes to ``--out``; one JSON line per run to
``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.common import arg, command
from benchmarks.smollm.bank import BANK_HOPS, _plain, bank_kb, bank_lines
from benchmarks.smollm.matrix import OVERRIDES
from hybridrag.evals.cli import parse_overrides
from hybridrag.evals.markdown import provenance
from hybridrag.evals.timing import load_text

METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")
NEW, BASELINE = "local:smollm2", "local:smollm2-baseline"
NEW_TEXT = "the current settings: slim prompt-cache states (agents/llm/prompt_cache.py), threads as configured"
BASELINES = {
    "full-states": "llama-cpp-python's own prompt-cache states (every evaluated position's logits copied too)",
    "one-thread": "the current settings on one llama.cpp thread (HYBRIDRAG_LOCAL_THREADS=1)",
    "draft": "the current settings with prompt-lookup speculative decoding of up to 8 tokens (HYBRIDRAG_LOCAL_DRAFT=8)",
}

OPTIONS = [
    arg("--per-hop", type=int, default=10, help="held-out questions per hop count"),
    arg("--hops", type=int, nargs="+", default=[1, 2, 3], choices=(1, 2, 3)),
    arg("--methods", nargs="+", default=list(METHODS), choices=METHODS),
    arg("--offset", type=int, default=1300, help="first question of the seed-0 shuffle asked (held out)"),
    arg("--out", default="docs/benchmarks_smollm_speed.md"),
    arg("--runs", default="eval-runs/smollm-hops", help="folder of the per-run JSON lines"),
    arg("--stop-at", default="", help="HH:MM UTC: no round of questions starts after it"),
    arg("--baseline", choices=tuple(BASELINES), default="full-states", help="what the new settings run against"),
]
SETS = {m: parse_overrides(OVERRIDES[m]["bank"] or []) for m in METHODS}


def held_out(hops: int, n: int, offset: int) -> list:
    """``n`` questions of ``dev_<hops>hop.txt`` from ``offset`` on in the seed-0 shuffle, none in the bank."""
    from hybridrag.evals.sets import resolve_dataset

    if offset < 1300:
        raise SystemExit(f"--offset {offset}: questions below 1300 are evaluated or banked by the smollm suite")
    questions = resolve_dataset(f"metaqa-{hops}hop", build_kb=False).questions
    order = list(range(len(questions)))
    random.Random(0).shuffle(order)
    banked = {_plain(line) for h in BANK_HOPS[f"metaqa-{hops}hop"] for line in bank_lines(h)}
    picked = [questions[i] for i in order[offset:] if _plain(questions[i].question) not in banked]
    return picked[:n]


def models(baseline: str) -> dict:
    """The two chat models by variant (the baseline registered as ``local:smollm2-baseline``)."""
    from hybridrag.agents.llm.models import load_chat_model, local_model, register_model

    new = load_chat_model(NEW)
    if baseline == "full-states":
        register_model(BASELINE, local_model("smollm2", slim_cache=False))
    elif baseline == "draft":
        register_model(BASELINE, local_model("smollm2", draft=8))
    else:  # the thread count is read when the model loads
        before = os.environ.get("HYBRIDRAG_LOCAL_THREADS")
        os.environ["HYBRIDRAG_LOCAL_THREADS"] = "1"
        try:
            register_model(BASELINE, local_model("smollm2"))
        finally:
            os.environ.pop("HYBRIDRAG_LOCAL_THREADS")
            if before is not None:
                os.environ["HYBRIDRAG_LOCAL_THREADS"] = before
    return {"new": new, "baseline": load_chat_model(BASELINE)}


def calls_between(counter, start: int) -> dict:  # noqa: ANN001 - a speed.Counter
    """llama.cpp's counters summed over the calls a run made."""
    calls = counter.calls[start:]
    out = {k: sum(c[k] for c in calls) for k in ("prompt_tokens", "evaluated", "prompt_ms", "generated", "gen_ms")}
    out.update({k: sum(c.get(k, 0) for c in calls) for k in ("drafted", "accepted")})  # speculative decoding only
    out["texts"] = [c["text"] for c in calls]
    out["wall_ms"] = sum(c["wall_ms"] for c in calls)
    out["other_ms"] = round(out["wall_ms"] - out["prompt_ms"] - out["gen_ms"], 1)
    out["llama_calls"] = len(calls)
    return out


def state_copy(model, repeats: int = 3) -> dict:  # noqa: ANN001 - a chat model on llama.cpp
    """Milliseconds to save and restore the model's current state (medians), and the state's MB."""
    from hybridrag.evals.timing import percentile

    llama, saves, loads, size = model.client, [], [], 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        state = llama.save_state()
        t1 = time.perf_counter()
        llama.load_state(state)
        loads.append((time.perf_counter() - t1) * 1000)
        saves.append((t1 - t0) * 1000)
        size = (state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes) / 2**20
    return {
        "save_ms": round(percentile(saves, 50), 1),
        "load_ms": round(percentile(loads, 50), 1),
        "mb": round(size, 1),
        "tokens": llama.n_tokens,
    }


def one_run(method: str, hops: int, variant: str, setup: dict, q, counter) -> dict:  # noqa: ANN001
    """Ask ``q`` once; the row of the run (seconds, Hit@1, usage, llama.cpp's counters)."""
    from hybridrag.evals.runner import run_one
    from hybridrag.evals.summary import score_record
    from hybridrag.graphs import context_for

    ctx = context_for(method, kb=str(setup["kb"].directory), llm=NEW if variant == "new" else BASELINE, **SETS[method])
    start, cpu0 = len(counter.calls), time.process_time()
    rec = run_one(setup["graphs"][method], ctx, q, setup["judge"])
    cpu = time.process_time() - cpu0  # every thread of this process: the work, whatever the load
    return {
        "method": method,
        "hops": hops,
        "variant": variant,
        "id": q.id,
        "question": q.question,
        "seconds": round(rec["seconds"], 3),
        "cpu_s": round(cpu, 3),
        "hit@1": score_record(rec)["hit@1"],
        "usage": rec["usage"],
        "error": rec["error"],
        **calls_between(counter, start),
    }


def prepare(hops: int, args: argparse.Namespace, graphs: dict, counters: dict) -> dict:
    """A hop count's KB, judge and questions; each method asks the spare question untimed, both variants."""
    from hybridrag.evals.datasets import with_answer_names
    from hybridrag.evals.relevance import Judge
    from hybridrag.kb.base import open_kb

    kb = open_kb(bank_kb(f"metaqa-{hops}hop"))
    setup = {"kb": kb, "judge": Judge.for_kb(kb, None), "graphs": graphs}
    questions = with_answer_names(held_out(hops, args.per_hop + 1, args.offset), kb.name)
    for method in args.methods:  # the first question of a process loads models and indexes
        for variant in ("new", "baseline"):
            one_run(method, hops, variant, setup, questions[-1], counters[variant])
    setup["questions"] = questions[:-1]
    return setup


def past(stop_at: str) -> bool:
    """Whether the UTC time ``HH:MM`` has passed today (never for an empty value)."""
    return bool(stop_at) and datetime.now(UTC).strftime("%H:%M") >= stop_at


def run(args: argparse.Namespace) -> int:
    """Ask every method each held-out question with both variants, rounds across hops; the page after each round."""
    from benchmarks.smollm.speed import Counter
    from benchmarks.smollm.speed_report import write_report
    from hybridrag.graphs import get_graph

    chat = models(args.baseline)
    counters = {v: Counter(m.client) for v, m in chat.items()}
    graphs = {m: get_graph(m) for m in args.methods}
    records = Path(args.runs) / "records.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    records.write_text("", encoding="utf-8")
    info, load0, rows, turn = provenance(), load_text(), [], 0
    setups = {h: prepare(h, args, graphs, counters) for h in args.hops}
    copies = {v: state_copy(m) for v, m in chat.items()}
    for i in range(args.per_hop):
        if past(args.stop_at):
            break
        for hops, setup in setups.items():
            if i >= len(setup["questions"]):
                continue
            for method in args.methods:
                order = ("new", "baseline") if turn % 2 == 0 else ("baseline", "new")
                turn += 1
                for variant in order:
                    row = one_run(method, hops, variant, setup, setup["questions"][i], counters[variant])
                    rows.append(row)
                    with records.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(row, ensure_ascii=False) + "\n")
        variants = {"new": NEW_TEXT, "baseline": BASELINES[args.baseline]}
        write_report(Path(args.out), rows, copies, info, command(args), f"{load0} → {load_text()}", variants)
    return 0
