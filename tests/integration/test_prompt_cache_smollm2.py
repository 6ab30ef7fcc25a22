"""hybridrag.agents.llm.prompt_cache with the real bundled SmolLM2-135M: roles taking turns restore
their own prefix from the slim RAM cache, and reply as a model without any cache does (no network)."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.integration

ROUTER = "You route questions about movies to the relation that answers them. " * 12
CHECKER = "You check whether a reply is supported by the references given to you. " * 12
QUESTIONS = ["who directed Heat", "what genre is Alien"]


def _turns(llama, evaluated: list[int]) -> list[str]:
    """Each question asked of the router, then of the checker; the prompt tokens evaluated each time."""
    import llama_cpp

    out = []
    for q in QUESTIONS:
        for system in (ROUTER, CHECKER):
            llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
            reply = llama.create_chat_completion(
                messages=[{"role": "system", "content": system}, {"role": "user", "content": q}],
                temperature=0.0,
                max_tokens=8,
            )
            evaluated.append(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval)
            out.append(reply["choices"][0]["message"]["content"])
    return out


def test_slim_states_restore_each_roles_prefix_and_reply_as_without_a_cache():
    assert importlib.util.find_spec("llama_cpp") is not None, "needs: pip install 'hybridrag[local]'"
    from hybridrag.agents.llm import prompt_cache
    from hybridrag.agents.llm.models import local_model

    slim = local_model("smollm2").client
    plain = local_model("smollm2").client
    plain.set_cache(None)
    assert "save_state" in vars(slim) and slim.cache is not None

    slim_evaluated: list[int] = []
    plain_evaluated: list[int] = []
    assert _turns(slim, slim_evaluated) == _turns(plain, plain_evaluated)
    # the second question's turns: the slim cache restored the role's instructions, evaluating the rest only
    assert all(s * 3 < p for s, p in zip(slim_evaluated[2:], plain_evaluated[2:], strict=True))

    state = slim.save_state()
    assert state.scores.size == 0 and state.n_tokens == slim.n_tokens
    prompt_cache.load_slim(slim, state)
    assert slim.n_tokens == state.n_tokens and slim._requires_eval
