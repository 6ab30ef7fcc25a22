"""Grammar-constrained greedy decoding with one grammar check per token instead of one per vocabulary entry.

llama-cpp-python samples under a grammar by running the grammar over every token of the
vocabulary (49,152 for SmolLM2) before each greedy pick: on this 2-core CPU that was about as
long as evaluating the token itself (``python -m benchmarks smollm-speed``). For greedy decoding the
grammar need not see them all: when the grammar allows the unconstrained best token, that token
is also the best allowed one, so the pick is the same; only when it refuses it is the whole
vocabulary filtered, as before (llama.cpp's own ``common_sampler`` works this way).

:func:`install` makes one ``llama_cpp.Llama`` build that sampler chain for greedy grammar calls
(``temperature=0``, no logits processor): the same penalties, then the check below, then the
grammar and greedy samplers. Any other call keeps llama-cpp-python's chain.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

_TOKEN = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


def _check_best_first(grammar_of: dict) -> Any:
    """The custom sampler step: keep only the best token when the grammar allows it."""
    import llama_cpp

    def apply(cur_p) -> None:  # noqa: ANN001 - llama_token_data_array_p
        arr = cur_p.contents
        if arr.size <= 1:
            return
        buf = (llama_cpp.llama_token_data * arr.size).from_address(ctypes.addressof(arr.data.contents))
        best = int(np.argmax(np.frombuffer(buf, dtype=_TOKEN)["logit"]))
        one = (llama_cpp.llama_token_data * 1)(buf[best])
        single = llama_cpp.llama_token_data_array(data=one, size=1, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(grammar_of["sampler"], ctypes.byref(single))
        if math.isinf(one[0].logit) and one[0].logit < 0:
            return  # refused: the grammar sampler after this step filters the whole vocabulary
        buf[0] = one[0]  # the only candidate left (the array's own slot 0 is no longer read)
        arr.size, arr.selected, arr.sorted = 1, -1, False

    return apply


def greedy_grammar_chain(
    llama: Any, grammar: Any, repeat_penalty: float, frequency_penalty: float, presence_penalty: float
) -> Any:
    """The sampler chain of a greedy grammar call: penalties, best-token check, grammar, greedy."""
    import llama_cpp
    from llama_cpp import _internals

    sampler = _internals.LlamaSampler()
    sampler.add_penalties(
        n_vocab=llama._n_vocab,
        penalty_last_n=llama.last_n_tokens_size,
        penalty_repeat=repeat_penalty,
        penalty_freq=frequency_penalty,
        penalty_present=presence_penalty,
    )
    grammar_of: dict = {}
    sampler.add_custom(_check_best_first(grammar_of))
    sampler.add_grammar(llama._model, grammar)
    grammar_of["sampler"] = llama_cpp.llama_sampler_chain_get(
        sampler.sampler, llama_cpp.llama_sampler_chain_n(sampler.sampler) - 1
    )
    sampler.add_greedy()
    return sampler


def install(llama: Any) -> None:
    """Make ``llama`` (a ``llama_cpp.Llama``) decode greedy grammar calls with :func:`greedy_grammar_chain`.

    The hook uses llama-cpp-python internals (``Llama._init_sampler``, ``_internals.LlamaSampler``);
    a version without them keeps its own sampler, untouched.
    """
    from llama_cpp import _internals

    original = getattr(llama, "_init_sampler", None)
    if original is None or not hasattr(_internals.LlamaSampler, "add_custom"):
        return

    def init_sampler(**kw: Any) -> Any:
        if (
            kw.get("grammar") is None
            or kw.get("temp", 0.8) != 0.0
            or kw.get("logits_processor") is not None
            or kw.get("mirostat_mode", 0)
        ):
            return original(**kw)
        return greedy_grammar_chain(
            llama,
            kw["grammar"],
            kw.get("repeat_penalty", 1.0),
            kw.get("frequency_penalty", 0.0),
            kw.get("presence_penalty", 0.0),
        )

    llama._init_sampler = init_sampler  # an instance attribute: ``del llama._init_sampler`` undoes it
