"""llama.cpp prompt states kept in RAM, so roles taking turns reuse their evaluated prefixes.

llama.cpp reuses the evaluated prefix of the previous prompt on its own; with roles taking turns
(router, validator, router, ...) each turn's long fixed instructions would be evaluated again.
llama-cpp-python's ``LlamaRAMCache`` keeps the state after each call and, before the next one,
restores the state sharing the longest prefix with the new prompt, so only the new part (the
question, the references) is evaluated.

Its ``Llama.save_state`` also copies the logits of every evaluated position (a row of 49,152
floats each for SmolLM2, up to ``n_batch`` = 512 rows: 96 MB), and ``load_state`` copies them back and
scans the rest of the array. A greedy call never reads them after a restore: a restored state
always evaluates at least one prompt token again (``_requires_eval``), whose logits are fresh.
:func:`install` therefore makes the model save and restore only llama.cpp's own state (its KV
cells) and the token ids; the logits copy was also left out of the cache's capacity, so the
cache held several times its bound (sizes and times: docs/benchmarks_smollm_speed.md). A model
built with ``logits_all`` (per-token log-probabilities) keeps llama-cpp-python's own methods.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

DEFAULT_MB = "256"


def prompt_cache_mb() -> int:
    """``HYBRIDRAG_LOCAL_PROMPT_CACHE_MB`` (default 256; 0: off): RAM kept for llama.cpp states."""
    from hybridrag.agents.llm.errors import ModelConfigError

    value = os.environ.get("HYBRIDRAG_LOCAL_PROMPT_CACHE_MB", DEFAULT_MB)
    if not value.isdigit():
        raise ModelConfigError(f"HYBRIDRAG_LOCAL_PROMPT_CACHE_MB must be a whole number of MB, not {value!r}")
    return int(value)


def save_slim(llama: Any) -> Any:
    """``llama``'s state without its logits: llama.cpp's own state, the token ids and the seed."""
    import llama_cpp

    ctx = llama._ctx.ctx
    size = llama_cpp.llama_state_get_size(ctx)
    buf = (ctypes.c_uint8 * int(size))()
    written = int(llama_cpp.llama_state_get_data(ctx, buf, size))
    if written > int(size):
        raise RuntimeError("llama.cpp wrote more state than it announced")
    return llama_cpp.LlamaState(
        input_ids=llama.input_ids.copy(),
        scores=np.empty((0, llama._n_vocab), dtype=np.single),
        n_tokens=llama.n_tokens,
        llama_state=ctypes.string_at(buf, written),
        llama_state_size=written,
        seed=llama._seed,
    )


def load_slim(llama: Any, state: Any) -> None:
    """Restore a state of :func:`save_slim`; the next call evaluates at least one token again."""
    import llama_cpp

    llama.input_ids = state.input_ids.copy()
    llama.n_tokens = state.n_tokens
    llama._requires_eval = True  # the logits were not kept: decode before sampling
    llama._seed = state.seed
    data = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
    if llama_cpp.llama_state_set_data(llama._ctx.ctx, data, state.llama_state_size) != state.llama_state_size:
        raise RuntimeError("llama.cpp refused the saved state")


def install(llama: Any, capacity_mb: int, slim: bool = True) -> bool:
    """Give ``llama`` a RAM prompt cache of ``capacity_mb``; with ``slim``, states without logits.

    Returns whether the slim save/restore is in use (not with ``logits_all``, nor on a
    llama-cpp-python without the attributes it relies on). ``capacity_mb`` 0: no cache.
    """
    from llama_cpp import LlamaRAMCache

    if capacity_mb <= 0:
        return False
    llama.set_cache(LlamaRAMCache(capacity_bytes=capacity_mb << 20))
    needed = ("_ctx", "_n_vocab", "_seed", "_requires_eval", "input_ids", "n_tokens")
    if not slim or getattr(llama, "_logits_all", False) or not all(hasattr(llama, a) for a in needed):
        return False
    llama.save_state = lambda: save_slim(llama)  # instance attributes: ``del`` restores the class's
    llama.load_state = lambda state: load_slim(llama, state)
    return True
