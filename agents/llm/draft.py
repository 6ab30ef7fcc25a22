"""Speculative decoding for the local model: drafts looked up in the prompt, checked in one batch.

SmolLM2 copies its few-shot examples, and a grammar forces much of a JSON reply (keys,
punctuation, the rest of a relation name), so the next tokens it writes are often already in
the prompt. :class:`PromptLookup` proposes them: it finds the last few tokens written in the
earlier text and proposes the tokens that followed them there. llama-cpp-python's own ``generate``
loop then checks a draft: the sampled token and the draft are evaluated in one batch, the sampler
(the same chain as without a draft: penalties, the greedy grammar check, the grammar, greedy)
picks each position's token in turn, and the draft is kept up to its first token that differs
from that pick; the rest is dropped from llama.cpp's cache and decoding goes on from the pick.
Each pick is the one plain decoding would make from the same logits.

llama-cpp-python turns on ``logits_all`` for a draft model: logits for every prompt position too
(an ``n_ctx`` x 49,152 float buffer, a copy per evaluated prompt token, and no slim prompt-cache
states). :func:`install` instead replaces the model's ``eval`` with one that asks llama.cpp for
logits only where they are read: the last prompt token, and every token of a draft batch
(the sampler reads them by negative index, counted from the batch's last output).

It is off unless an operator sets ``HYBRIDRAG_LOCAL_DRAFT`` (the most tokens a draft proposes;
never client-settable), as measured on this build it is neither faster nor exact: llama.cpp's
logits for a token evaluated in a batch differ from a lone token's (by up to 1.39 on SmolLM2's
replies), so a near tie can flip, and on this CPU a step of 2-8 tokens costs 2.01-4.45 single
steps (docs/benchmarks_smollm_draft.md; docs/benchmarks_smollm_speed.md, "Speculative decoding").
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DEFAULT_DRAFT = "0"


def draft_tokens() -> int:
    """``HYBRIDRAG_LOCAL_DRAFT``: most tokens a draft proposes (default 0: no speculative decoding)."""
    from hybridrag.agents.llm.errors import ModelConfigError

    value = os.environ.get("HYBRIDRAG_LOCAL_DRAFT", DEFAULT_DRAFT).strip()
    if not value.isdigit() or int(value) > 64:
        raise ModelConfigError(f"HYBRIDRAG_LOCAL_DRAFT must be a whole number of tokens from 0 to 64, not {value!r}")
    return int(value)


class PromptLookup:
    """Draft tokens from the context itself: what followed the last time its last ``n`` tokens appeared.

    The longest n-gram (``max_ngram`` down to ``min_ngram`` tokens) ending the context that also
    occurs earlier wins; of its earlier occurrences the latest with a continuation is used.
    """

    def __init__(self, max_tokens: int, max_ngram: int = 3, min_ngram: int = 1) -> None:
        """Propose at most ``max_tokens`` tokens, matching ``max_ngram`` .. ``min_ngram`` tokens."""
        self.max_tokens, self.max_ngram, self.min_ngram = max_tokens, max_ngram, min_ngram

    def __call__(self, input_ids: np.ndarray, /, **_: Any) -> np.ndarray:
        """The draft for the context ``input_ids`` (possibly empty)."""
        ids = np.asarray(input_ids, dtype=np.intc)
        n = len(ids)
        for size in range(min(self.max_ngram, n - 1), self.min_ngram - 1, -1):
            tail = ids[n - size :]
            windows = np.lib.stride_tricks.sliding_window_view(ids[: n - 1], size)  # not the tail itself
            starts = np.flatnonzero((windows == tail).all(axis=1))
            if len(starts):
                follow = int(starts[-1]) + size
                return ids[follow : min(follow + self.max_tokens, n)].copy()
        return np.empty(0, dtype=np.intc)


@dataclass
class DraftStats:
    """Counters over the calls of one model: one dict per ``generate`` call in ``calls``."""

    calls: list[dict] = field(default_factory=list)

    def start(self, prompt_tokens: int) -> dict:
        """A new call's counters."""
        call: dict[str, float] = {"prompt_tokens": prompt_tokens, "generated": 0, "batches": 0, "drafted": 0}
        call.update({"batch_tokens": 0, "batch_ms": 0.0, "p_eval_tokens": 0, "p_eval_ms": 0.0})
        self.calls.append(call)
        return call


def accepted(call: dict) -> int:
    """Draft tokens a call kept: each evaluation (the prompt's and every batch's) yields one token besides them."""
    return max(0, call["generated"] - call["batches"] - 1)


def llama_perf(llama: Any) -> tuple[int, float]:
    """llama.cpp's prompt-evaluation counters (tokens, ms) once its queued work is done."""
    import llama_cpp

    llama_cpp.llama_synchronize(llama._ctx.ctx)
    perf = llama_cpp.llama_perf_context(llama._ctx.ctx)
    return int(perf.n_p_eval), float(perf.t_p_eval_ms)


def _eval_with_outputs(llama: Any, state: dict, perf: Callable[[Any], tuple[int, float]]) -> Any:
    """``Llama.eval`` asking for logits of the last token only, or of every token of a draft batch."""

    def eval_tokens(tokens: list[int]) -> None:
        batch_all, state["draft_pending"] = state["draft_pending"], False
        call = state["call"]
        llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)
        t0 = time.perf_counter()
        before = perf(llama) if batch_all and call is not None else (0, 0.0)
        for i in range(0, len(tokens), llama.n_batch):
            chunk = tokens[i : i + llama.n_batch]
            n_past = llama.n_tokens
            llama._batch.set_batch(batch=chunk, n_past=n_past, logits_all=batch_all)
            llama._ctx.decode(llama._batch)
            llama.input_ids[n_past : n_past + len(chunk)] = chunk
            llama.n_tokens += len(chunk)
            llama._requires_eval = False
        if batch_all and call is not None:  # a generation step: its time and tokens, apart from the prompt's
            after = perf(llama)
            call["batches"] += 1
            call["batch_tokens"] += len(tokens)
            call["batch_ms"] += (time.perf_counter() - t0) * 1000
            call["p_eval_tokens"] += after[0] - before[0]
            call["p_eval_ms"] += after[1] - before[1]

    return eval_tokens


def _counted_generate(llama: Any, stats: DraftStats, state: dict) -> Any:
    """``Llama.generate`` that opens a call's counters and counts the tokens it yields."""
    inner_generate = llama.generate

    def generate(tokens: Any, **kwargs: Any) -> Any:
        call = stats.start(len(tokens))
        state["call"], state["draft_pending"] = call, False
        inner = inner_generate(tokens, **kwargs)
        sent = None
        try:
            while True:
                token = inner.send(sent)
                call["generated"] += 1
                sent = yield token
        except StopIteration:
            return
        finally:
            inner.close()

    return generate


class _Drafter:
    """The draft model ``generate`` calls after each step; it marks the next evaluation as a draft batch."""

    def __init__(self, lookup: PromptLookup, state: dict) -> None:
        self.lookup, self.state = lookup, state

    def __call__(self, input_ids: np.ndarray, /, **_: Any) -> np.ndarray:
        draft = self.lookup(input_ids)
        self.state["draft_pending"] = True
        if self.state["call"] is not None:
            self.state["call"]["drafted"] += len(draft)
        return draft


def install(llama: Any, max_tokens: int, perf: Callable[[Any], tuple[int, float]] = llama_perf) -> DraftStats | None:
    """Give ``llama`` (a ``llama_cpp.Llama`` without ``logits_all``) prompt-lookup speculative decoding.

    Returns the model's counters, or None (nothing changed) when ``max_tokens`` is 0, the model
    computes every position's logits anyway, or this llama-cpp-python lacks what the loop relies on.
    ``perf`` reads llama.cpp's prompt counters (tests pass their own).
    """
    needed = ("_ctx", "_batch", "draft_model", "input_ids", "n_tokens", "n_batch", "generate")
    if max_tokens <= 0 or getattr(llama, "_logits_all", True) or not all(hasattr(llama, a) for a in needed):
        return None
    stats, state = DraftStats(), {"call": None, "draft_pending": False}
    llama.eval = _eval_with_outputs(llama, state, perf)  # instance attributes: ``del`` restores the class's
    llama.generate = _counted_generate(llama, stats, state)
    llama.draft_model = _Drafter(PromptLookup(max_tokens), state)
    llama.hybridrag_draft_stats = stats
    return stats


def uninstall(llama: Any) -> None:
    """Undo :func:`install`: plain token-by-token decoding again."""
    for name in ("eval", "generate", "hybridrag_draft_stats"):
        llama.__dict__.pop(name, None)
    llama.draft_model = None
