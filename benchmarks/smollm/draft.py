"""``python -m benchmarks smollm-draft``: SmolLM2 with prompt-lookup speculative decoding against plain decoding.

Two models are loaded in this one process: plain token-by-token decoding (the current settings)
and the same with :mod:`agents.llm.draft` (``--draft`` tokens at most). For held-out MetaQA dev
questions (as ``smollm-hops`` picks them) each method's first role call (HybGRAG's router, MoR's
planner, built as :mod:`benchmarks.smollm.speed` builds them on the bank KB) is asked of both
models (with ``--builtin`` also of a third: llama-cpp-python's own ``LlamaPromptLookupDecoding``, which
keeps every position's logits), their order alternating from one call to the next (one more question per hop is asked of
both first, untimed: it loads the KB's indexes and examples). Per call: the reply texts (same or
not), wall and CPU milliseconds, generation milliseconds (draft batches included), tokens
generated, draft tokens proposed and kept, decode steps.

Then the cost of one decode step by its number of tokens (logits for all of them, as a draft
batch asks) at the plain model's last context, sizes alternating, ``--repeats`` times each; and,
for the plain model's last call of each method and hop, its reply's logits evaluated in one batch
with the prompt against one token at a time (a third model, with every position's logits).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.common import arg, command
from benchmarks.smollm.bank import bank_kb
from hybridrag.evals.markdown import header, provenance, table
from hybridrag.evals.timing import load_text, percentile

OPTIONS = [
    arg("--per-hop", type=int, default=6, help="held-out questions per hop count"),
    arg("--hops", type=int, nargs="+", default=[1, 2, 3], choices=(1, 2, 3)),
    arg("--methods", nargs="+", default=["hybgrag", "mor"], choices=("hybgrag", "mor")),
    arg("--shots", type=int, default=3, help="examples shown (num_few_shot)"),
    arg("--draft", type=int, default=8, help="most tokens a draft proposes"),
    arg("--offset", type=int, default=1300, help="first question of the seed-0 shuffle asked (held out)"),
    arg("--repeats", type=int, default=15, help="timings of each decode-step size"),
    arg("--builtin", action="store_true", help="also llama-cpp-python's own prompt-lookup draft model"),
    arg("--out", default="docs/benchmarks_smollm_draft.md"),
]
SIZES = (1, 2, 3, 4, 6, 8)


def timed_call(method: str, kb, model, counter, question: str, shots: int) -> dict:  # noqa: ANN001
    """One first role call; llama.cpp's counters for it with its wall and CPU milliseconds."""
    from benchmarks.smollm.speed import first_call

    t0, cpu0 = time.perf_counter(), time.process_time()
    first_call(method, kb, model, question, shots)
    row = dict(counter.calls[-1])
    row["call_ms"] = (time.perf_counter() - t0) * 1000
    row["cpu_ms"] = (time.process_time() - cpu0) * 1000
    return row


def step_costs(llama, sizes: tuple[int, ...], repeats: int) -> dict[int, list[float]]:  # noqa: ANN001
    """Milliseconds of one decode step of each size (logits for every token) at ``llama``'s context."""
    import llama_cpp

    n0 = llama.n_tokens
    tokens = [int(t) for t in llama.input_ids[max(0, n0 - max(sizes)) : n0]]
    out: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(repeats):
        for n in sizes:
            llama._ctx.kv_cache_seq_rm(-1, n0, -1)
            llama._batch.set_batch(batch=tokens[:n], n_past=n0, logits_all=True)
            t0 = time.perf_counter()
            llama._ctx.decode(llama._batch)
            llama_cpp.llama_synchronize(llama._ctx.ctx)
            out[n].append((time.perf_counter() - t0) * 1000)
    llama._ctx.kv_cache_seq_rm(-1, n0, -1)
    llama._requires_eval = True  # the last logits are a timing's: decode again before sampling
    return out


def batch_gaps(contexts: list[tuple[str, list[int], int]]) -> list[list[object]]:
    """Per context: the reply's logits evaluated in one batch with the prompt against one token at a time.

    ``contexts`` holds (label, prompt and reply tokens, prompt length). Returns rows: label, reply
    positions compared, the largest logit difference, positions whose best token differs.
    """
    import llama_cpp
    import numpy as np

    from hybridrag.agents.llm.models import bundled_gguf, local_threads

    n = local_threads()
    llama = llama_cpp.Llama(
        model_path=str(bundled_gguf()), n_ctx=4096, n_batch=512, n_threads=n, n_threads_batch=n,
        logits_all=True, seed=0, verbose=False,
    )  # fmt: skip
    rows: list[list[object]] = []
    for label, tokens, prompt in contexts:
        llama.reset()
        llama.eval(tokens)
        batched = llama.scores[prompt : len(tokens)].copy()
        llama.reset()
        llama.eval(tokens[:prompt])
        for token in tokens[prompt:]:
            llama.eval([token])
        single = llama.scores[prompt : len(tokens)].copy()
        flips = int((batched.argmax(axis=1) != single.argmax(axis=1)).sum())
        rows.append([label, len(tokens) - prompt, f"{float(np.abs(batched - single).max()):.3f}", flips])
    return rows


def _p50(values: list[float]) -> float:
    return percentile(values, 50) if values else 0.0


def builtin_model(draft: int):  # noqa: ANN201 - a chat model on llama.cpp
    """Plain settings plus llama-cpp-python's own ``LlamaPromptLookupDecoding`` (every position's logits kept)."""
    import numpy as np
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    from hybridrag.agents.llm.models import local_model

    model = local_model("smollm2", slim_cache=False, draft=0)  # its own cache states: they carry the logits
    llama = model.client
    llama.draft_model = LlamaPromptLookupDecoding(num_pred_tokens=draft)
    llama._logits_all = True  # what the constructor sets with a draft model; its buffer sized for n_ctx rows
    llama.scores = np.zeros((llama._n_ctx, llama._n_vocab), dtype=np.single)
    return model


def call_rows(pairs: list[dict]) -> list[list[object]]:
    """Per method and hop: same texts, p50 wall / CPU / generation ms each way, tokens and drafts."""
    keys = sorted({(p["method"], p["hops"]) for p in pairs})
    out = []
    for method, hops in keys:
        group = [p for p in pairs if (p["method"], p["hops"]) == (method, hops)]
        off, on = [p["off"] for p in group], [p["on"] for p in group]
        drafts = [v for v in ("on", "builtin") if v in group[0]]
        same = [str(sum(p[v]["text"] == p["off"]["text"] for p in group)) for v in drafts]
        cells: list[object] = [method, f"{hops}-hop", len(group), " / ".join(same)]
        for key in ("call_ms", "cpu_ms"):
            cells.append(" / ".join(f"{_p50([p[v][key] for p in group]):.0f}" for v in ["off", *drafts]))
        cells.append(f"{_p50([r['gen_ms'] for r in off]):.0f} / {_p50([r['gen_ms'] for r in on]):.0f}")
        n = len(group)
        cells += [
            f"{sum(r['generated'] for r in on) / n:.1f}",
            f"{sum(r['steps'] for r in on) / n:.1f}",
            f"{sum(r['accepted'] for r in on) / n:.1f} / {sum(r['drafted'] for r in on) / n:.1f}",
        ]
        out.append(cells)
    return out


def write_page(
    out: Path, pairs: list[dict], costs: dict[int, list[float]], gaps: list, cmd: str, info: dict, load: str
) -> None:
    """The page: the calls both ways, the decode-step costs, the logits by how they were evaluated."""
    same = sum(p["off"]["text"] == p["on"]["text"] for p in pairs)
    ways = "off / on / builtin" if pairs and "builtin" in pairs[0] else "off / on"
    lines = header(
        "SmolLM2 with prompt-lookup speculative decoding against plain decoding (suite `smollm-draft`)",
        cmd,
        info,
        [
            f"Load average (1/5/15 min) start → end: {load}; the machine's 2 cores were shared with other jobs.",
            "The models in one process, each call asked of each in turn, the order alternating; **off**: plain"
            " decoding; **on**: drafts of agents/llm/draft.py; **builtin**: llama-cpp-python's"
            " LlamaPromptLookupDecoding (with --builtin).",
        ],
    )
    lines += [f"Same reply text off and on on {same} of {len(pairs)} calls.", ""]
    same_head = "same text as off: " + ways.split(" / ", 1)[1]
    head = ["method", "hops", "calls", same_head, f"call ms p50 {ways}", f"CPU ms p50 {ways}"]
    head += ["generation ms p50 off / on", "tokens / call", "decode steps / call (on)", "draft kept / proposed"]
    lines += table(head, call_rows(pairs))
    single = _p50(costs.get(1, []))
    lines += ["", "## One decode step by its tokens (logits for each), at the plain model's last context", ""]
    rows = [
        [n, f"{_p50(v):.1f}", f"{_p50(v) / n:.1f}", f"{_p50(v) / single:.2f}" if single else "–"]
        for n, v in costs.items()
    ]
    lines += table(["tokens", "ms p50", "ms per token", "× one token's step"], rows)
    lines += ["", "## A reply's logits: evaluated in one batch with its prompt against one token at a time", ""]
    lines += table(["last call of", "reply tokens", "largest logit difference", "best token differs at"], gaps)
    lines += [
        "",
        "*decode steps*: the prompt's evaluation and each batch after it (plain decoding takes one step a token).",
        "*generation ms*: llama.cpp's time for single-token steps plus the draft batches' time.",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    """Ask both models each role's first call per held-out question; time the decode steps; write the page."""
    from benchmarks.smollm.speed import Counter
    from benchmarks.smollm.speed_hops import held_out
    from hybridrag.agents.llm.models import local_model
    from hybridrag.kb.base import open_kb

    models = {"off": local_model("smollm2", draft=0), "on": local_model("smollm2", draft=args.draft)}
    if args.builtin:
        models["builtin"] = builtin_model(args.draft)
    counters = {v: Counter(m.client) for v, m in models.items()}
    info, load0, pairs, turn = provenance(), load_text(), [], 0
    contexts: dict[str, tuple[str, list[int], int]] = {}  # the plain model's last prompt and reply per method/hop
    for hops in args.hops:
        kb = open_kb(bank_kb(f"metaqa-{hops}hop"))
        questions = held_out(hops, args.per_hop + 1, args.offset)
        for method in args.methods:  # untimed: the first calls load the KB's indexes and examples
            for v in models:
                timed_call(method, kb, models[v], counters[v], questions[-1].question, args.shots)
        for q in questions[:-1]:
            for method in args.methods:
                order = list(models) if turn % 2 == 0 else list(models)[::-1]
                turn += 1
                pair = {"method": method, "hops": hops}
                for v in order:
                    pair[v] = timed_call(method, kb, models[v], counters[v], q.question, args.shots)
                pairs.append(pair)
                plain = models["off"].client
                last = (f"{method} {hops}-hop", [int(t) for t in plain.input_ids[: plain.n_tokens]])
                contexts[last[0]] = (*last, int(pair["off"]["prompt_tokens"]))
        write_page(Path(args.out), pairs, {}, [], command(args), info, f"{load0} → {load_text()}")
    costs = step_costs(models["off"].client, SIZES, args.repeats)
    gaps = batch_gaps(list(contexts.values()))
    write_page(Path(args.out), pairs, costs, gaps, command(args), info, f"{load0} → {load_text()}")
    return 0
