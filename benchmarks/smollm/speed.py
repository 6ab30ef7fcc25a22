"""``python -m benchmarks smollm-speed``: where a SmolLM2 router / planner call spends its time.

For the first ``--n`` questions of a dataset's seed-0 shuffle (the questions the matrix asks), it
builds the HybGRAG router's or the MoR planner's first prompt exactly as the graphs do (bank KB of
:mod:`benchmarks.smollm.bank`, ``num_few_shot`` nearest examples, the grammar's choices) and calls the
role through the project's code, reading llama.cpp's own counters around each call:

- prompt tokens, and how many of them llama.cpp evaluated (the rest came from the previous
  prompt's prefix or the RAM prompt cache), with the evaluation's milliseconds;
- generated tokens and their milliseconds;
- the rest of the call's wall time (grammar build, constrained sampling, cache copies, Python);
- with ``--no-grammar-check``, the same prompt again without the grammar and the same number of
  generated tokens (its prompt is cached by then), for the grammar's own cost.

One line per call (JSON) on stdout, medians on stderr with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from benchmarks.common import arg
from benchmarks.smollm.bank import bank_kb
from hybridrag.evals.timing import load_text, percentile

DATASETS = {"1hop": "metaqa-1hop", "2hop": "metaqa-2hop", "3hop": "metaqa-3hop", "hybrid50": "metaqa-hybrid-50"}


class Counter:
    """Wraps ``Llama.create_chat_completion`` of one llama.cpp instance and keeps each call's counters."""

    def __init__(self, client) -> None:  # noqa: ANN001 - a llama_cpp.Llama
        import llama_cpp

        self.client, self.lib, self.calls = client, llama_cpp, []
        self._inner = client.create_chat_completion
        client.create_chat_completion = self._call

    def _call(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        self.lib.llama_perf_context_reset(self.client._ctx.ctx)
        drafts = getattr(self.client, "hybridrag_draft_stats", None)  # speculative decoding's counters, if on
        self._drafts0 = len(drafts.calls) if drafts else 0
        t0 = time.perf_counter()
        out = self._inner(*args, **kwargs)
        if not isinstance(out, dict):  # a stream (ChatLlamaCpp streams by default): run it to the end
            chunks = list(out)
            self._record(
                t0,
                "".join((c["choices"][0]["delta"] or {}).get("content") or "" for c in chunks if c["choices"]),
                "response_format" in kwargs,
            )
            return iter(chunks)
        self._record(t0, out["choices"][0]["message"]["content"], "response_format" in kwargs)
        return out

    def _record(self, t0: float, text: str, grammar: bool) -> None:
        wall = (time.perf_counter() - t0) * 1000
        perf = self.lib.llama_perf_context(self.client._ctx.ctx)
        row = {
            "prompt_tokens": self.client.n_tokens - perf.n_eval,
            "evaluated": perf.n_p_eval,
            "prompt_ms": round(perf.t_p_eval_ms, 1),
            "generated": perf.n_eval,
            "gen_ms": round(perf.t_eval_ms, 1),
            "wall_ms": round(wall, 1),
            "grammar": grammar,
            "text": text,
        }
        drafts = getattr(self.client, "hybridrag_draft_stats", None)
        if drafts and len(drafts.calls) > self._drafts0:
            row.update(draft_counters(drafts.calls[-1], perf))
        self.calls.append(row)


def draft_counters(call: dict, perf) -> dict:  # noqa: ANN001 - llama.cpp's perf counters
    """A speculative call's counters: its draft batches moved from llama.cpp's prompt counters to generation."""
    from hybridrag.agents.llm.draft import accepted

    return {
        "prompt_tokens": call["prompt_tokens"],
        "evaluated": perf.n_p_eval - call["p_eval_tokens"],
        "prompt_ms": round(perf.t_p_eval_ms - call["p_eval_ms"], 1),
        "generated": call["generated"],
        "gen_ms": round(perf.t_eval_ms + call["p_eval_ms"], 1),
        "steps": call["batches"] + 1,
        "drafted": call["drafted"],
        "accepted": accepted(call),
    }


def questions(key: str, n: int) -> list:
    """The first ``n`` questions of the dataset's seed-0 sample (as ``hybridrag eval --limit``)."""
    from hybridrag.evals.datasets import load_metaqa, sample
    from hybridrag.evals.hybrid import metaqa_dir

    hops = 1 if key == "hybrid50" else int(key[0])
    return sample(load_metaqa(metaqa_dir() / f"dev_{hops}hop.txt"), n, 0)


def first_call(method: str, kb, model, question: str, shots: int) -> None:  # noqa: ANN001
    """The role's first call for ``question``, built as the graph builds it."""
    schema = kb.graph.schema()
    if method == "hybgrag":
        from hybridrag.agents.hybgrag import roles
        from hybridrag.agents.hybgrag.shots import examples_for

        examples = examples_for(kb, "router", question, "kb", shots, "")
        roles.route(
            model,
            roles.router_first_messages(question, schema, examples),
            "function_calling",
            roles.router_choices(schema, question),
        )
    else:
        from hybridrag.agents.mor import roles
        from hybridrag.agents.mor.examples import planner_shots

        examples = planner_shots(kb, question, "kb", shots, "paths", "")
        show = roles.schema_shown(os.environ.get("HYBRIDRAG_PLANNER_SCHEMA", "auto"), model, True, len(examples))
        roles.plan(
            model,
            roles.planner_messages(question, schema, examples, "paths", show),
            "paths",
            "function_calling",
            roles.plan_choices(schema, question, "paths"),
        )


def gold_path(method: str, text: str, qtype: str | None) -> bool | None:
    """Whether the reply's relation path is the gold path of the question's type.

    As the report's *first path = gold*; None without a type or a readable reply.
    """
    from benchmarks.smollm.report import first_path, path_correct

    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not qtype:
        return None
    step = (
        {"node": "route_question", "relations": list(dict.fromkeys(data.get("relations") or []))}
        if method == "hybgrag"
        else {"node": "plan_question", "raw": data}
    )
    return path_correct({"qtype": qtype}, first_path({"trace": [step]}) or [])


def plain_again(counter: Counter, messages: list[dict], tokens: int) -> None:
    """The last prompt once more without the grammar, generating the same number of tokens."""
    counter.client.create_chat_completion(messages=messages, max_tokens=max(1, tokens), temperature=0.0)


def median(rows: list[dict], key: str) -> float:
    """The median of one counter over the calls, to 0.1 (0 for no calls)."""
    return round(percentile((r[key] for r in rows), 50, "midpoint"), 1) if rows else 0.0


def medians(rows: list[dict], plain: list[dict]) -> dict:
    """The medians of every counter, the gold-path and topic counts, and the calls' other time."""
    keys = ("prompt_tokens", "evaluated", "prompt_ms", "generated", "gen_ms", "wall_ms")
    summary: dict = {k: median(rows, k) for k in keys}
    summary["gold_path"] = f"{sum(bool(r['gold_path']) for r in rows)}/{len(rows)}"
    summary["topic_named"] = f"{sum(r['topic'] for r in rows)}/{len(rows)}"
    other = [{"other": r["wall_ms"] - r["prompt_ms"] - r["gen_ms"]} for r in rows]
    summary["other_ms"] = median(other, "other")
    if plain:
        summary["plain_other_ms"] = median(
            [{"other": r["wall_ms"] - r["prompt_ms"] - r["gen_ms"]} for r in plain], "other"
        )
        summary["plain_gen_ms"] = median(plain, "gen_ms")
    return summary


OPTIONS = [
    arg("--method", choices=("hybgrag", "mor"), required=True),
    arg("--dataset", choices=tuple(DATASETS), default="1hop"),
    arg("--n", type=int, default=8, help="questions"),
    arg("--shots", type=int, default=3, help="examples shown (num_few_shot)"),
    arg(
        "--full-grammar",
        action="store_true",
        help="llama-cpp-python's own grammar sampling (every vocabulary entry checked each token)",
    ),
    arg(
        "--no-grammar-check",
        action="store_true",
        help="after each call, the same prompt without the grammar (same generated tokens)",
    ),
]


def run(args: argparse.Namespace) -> int:
    """Time the role's first call on each question; one JSON line per call, medians on stderr."""
    from hybridrag.agents.llm.models import load_chat_model
    from hybridrag.kb.base import open_kb

    kb = open_kb(bank_kb(DATASETS[args.dataset]))
    model = load_chat_model("local:smollm2")
    if args.full_grammar:
        del model.client._init_sampler  # undo agents.llm.greedy_grammar.install
    counter = Counter(model.client)
    seen: list[list[dict]] = []
    inner = counter._inner

    def keep(*a, **kw):  # noqa: ANN002, ANN003, ANN202 - remember the messages of each call
        seen.append(kw.get("messages") or a[0])
        return inner(*a, **kw)

    counter._inner = keep
    load0 = load_text()
    rows, plain = [], []
    for q in questions(args.dataset, args.n):
        first_call(args.method, kb, model, q.question, args.shots)
        row = dict(counter.calls[-1], question=q.question)
        row["gold_path"] = gold_path(args.method, row["text"], q.qtype)
        row["topic"] = bool(q.topic) and q.topic.casefold() in row["text"].casefold()
        rows.append(row)
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        if args.no_grammar_check:
            plain_again(counter, seen[-1], row["generated"])
            plain.append(counter.calls[-1])
    load1 = load_text()
    summary = medians(rows, plain)
    threads = os.environ.get("HYBRIDRAG_LOCAL_THREADS", "default")
    sys.stderr.write(
        f"{args.method} {args.dataset} n={len(rows)} shots={args.shots} threads={threads} "
        f"cache_mb={os.environ.get('HYBRIDRAG_LOCAL_PROMPT_CACHE_MB', '256')} medians: "
        f"{json.dumps(summary)} load {load0} -> {load1}\n"
    )
    return 0
