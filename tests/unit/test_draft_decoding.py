"""agents.llm.draft without a model: prompt lookup, and llama-cpp-python's own decoding loop on a scripted model.

The scripted model stands in for llama.cpp: each evaluated position's "logits" name the next
token, computed from the tokens in its cache, and a pick may only read a position that asked
for logits (llama.cpp refuses the others). ``Llama.generate`` and ``Llama.eval`` are the real
llama-cpp-python methods, so the test covers the loop that keeps or drops the drafts.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python")

PROMPT = [5, 1, 2, 3, 4, 9, 1, 2, 3, 4, 9, 7, 1, 2]
REPLY = [3, 4, 8, 7, 1, 2, 3, 4, 9, 2]  # copies the prompt in stretches, then leaves it
OFF_SCRIPT = -1  # what the scripted model writes after a prefix it was not scripted for


def next_token(context: list[int]) -> int:
    """The scripted model: the reply's next token after the prompt and the reply so far, else OFF_SCRIPT."""
    done = context[len(PROMPT) :]
    if context[: len(PROMPT)] != PROMPT or done != REPLY[: len(done)] or len(done) >= len(REPLY):
        return OFF_SCRIPT
    return REPLY[len(done)]


class FakeBatch:
    """``_internals.LlamaBatch.set_batch``: tokens, positions and the logits flags."""

    def set_batch(self, batch, n_past: int, logits_all: bool) -> None:
        self.tokens, self.n_past = list(batch), n_past
        self.flags = [logits_all] * len(batch)
        self.flags[-1] = True


class FakeContext:
    """llama.cpp's cache and outputs: ``decode`` fills the cache and computes the flagged positions only."""

    def __init__(self) -> None:
        self.cache: list[int] = []
        self.outputs: list[int] = []
        self.decoded: list[int] = []  # tokens per decode call

    def kv_cache_seq_rm(self, seq: int, p0: int, p1: int) -> bool:
        del self.cache[p0:]
        return True

    def decode(self, batch: FakeBatch) -> None:
        assert len(self.cache) == batch.n_past
        self.outputs = []
        for token, flag in zip(batch.tokens, batch.flags, strict=True):
            self.cache.append(token)
            if flag:
                self.outputs.append(next_token(self.cache))
        self.decoded.append(len(batch.tokens))


class FakeLlama:
    """The attributes ``Llama.generate``/``Llama.eval`` and draft.install use, on the scripted model."""

    import llama_cpp as _lib

    generate = _lib.Llama.generate
    eval = _lib.Llama.eval

    def __init__(self) -> None:
        self._ctx, self._batch = FakeContext(), FakeBatch()
        self.n_tokens, self.n_batch, self._n_ctx = 0, 512, 256
        self.input_ids = np.zeros(self._n_ctx, dtype=np.intc)
        self._logits_all, self._requires_eval, self.draft_model, self.verbose = False, False, None, False

    @property
    def _input_ids(self) -> np.ndarray:
        return self.input_ids[: self.n_tokens]

    def _init_sampler(self, **_) -> None:
        return None

    def reset(self) -> None:
        self.n_tokens = 0

    def sample(self, idx: int, **_) -> int:
        """The greedy pick at ``idx``: read by negative index from the last decode's outputs, as llama.cpp does."""
        ridx = idx - self.n_tokens
        if -ridx > len(self._ctx.outputs):
            raise IndexError(f"no logits for position {idx}")
        return self._ctx.outputs[ridx]


def decode(llama: FakeLlama, prompt: list[int], n: int) -> list[int]:
    """The first ``n`` tokens ``generate`` yields for ``prompt`` (the consumer then stops, as a max_tokens does)."""
    out = []
    for token in llama.generate(prompt, temp=0.0):
        out.append(int(token))
        if len(out) == n:
            break
    return out


def no_perf(_llama) -> tuple[int, float]:
    return 0, 0.0


def test_prompt_lookup_proposes_what_followed_the_longest_latest_match():
    from hybridrag.agents.llm.draft import PromptLookup

    ids = np.array([7, 1, 2, 3, 8, 1, 2, 4, 5, 6, 1, 2], dtype=np.intc)
    assert PromptLookup(3)(ids).tolist() == [4, 5, 6]  # "1 2" last followed by 4 (not the earlier 3)
    assert PromptLookup(2, max_ngram=3)(ids).tolist() == [4, 5]  # at most max_tokens
    assert PromptLookup(5)(np.array([1, 2, 3, 1, 2, 3, 9], dtype=np.intc)).tolist() == []  # 9 never seen before
    three = np.array([1, 2, 3, 5, 2, 3, 6, 1, 2, 3], dtype=np.intc)
    assert PromptLookup(2, max_ngram=3)(three).tolist() == [5, 2]  # "1 2 3" outranks the later "2 3"
    assert PromptLookup(4)(np.array([4], dtype=np.intc)).tolist() == []


def test_drafts_give_the_same_tokens_in_fewer_decode_steps():
    from hybridrag.agents.llm.draft import accepted, install

    plain = FakeLlama()
    expected = decode(plain, PROMPT, len(REPLY))
    assert expected == REPLY and plain._ctx.decoded == [len(PROMPT)] + [1] * (len(REPLY) - 1)

    spec = FakeLlama()
    stats = install(spec, 4, perf=no_perf)
    assert stats is not None and spec.draft_model is not None
    assert decode(spec, PROMPT, len(REPLY)) == REPLY
    call = stats.calls[-1]
    assert call["prompt_tokens"] == len(PROMPT) and call["generated"] == len(REPLY)
    assert len(spec._ctx.decoded) < len(plain._ctx.decoded)  # drafts were kept
    assert call["batches"] == len(spec._ctx.decoded) - 1 and accepted(call) == len(REPLY) - len(spec._ctx.decoded)
    assert 0 < accepted(call) <= call["drafted"]


def test_a_rejected_draft_leaves_the_cache_as_plain_decoding_has_it():
    from hybridrag.agents.llm.draft import install

    spec = FakeLlama()
    install(spec, 8, perf=no_perf)
    decode(spec, PROMPT, len(REPLY))
    # every kept position holds the prompt and the reply (a dropped draft token would be off script)
    assert spec._ctx.cache[: len(PROMPT) + len(REPLY) - 1] == PROMPT + REPLY[:-1]
    assert list(spec._input_ids) == spec._ctx.cache
    assert decode(spec, PROMPT, len(REPLY)) == REPLY  # the next call starts from that cache, same tokens


def test_draft_batches_ask_logits_for_every_token_and_the_prompt_for_its_last():
    from hybridrag.agents.llm.draft import install

    spec = FakeLlama()
    seen: list[list[bool]] = []
    set_batch = spec._batch.set_batch

    def record(batch, n_past: int, logits_all: bool) -> None:
        set_batch(batch, n_past, logits_all)
        seen.append(list(spec._batch.flags))

    spec._batch.set_batch = record
    install(spec, 4, perf=no_perf)
    decode(spec, PROMPT, len(REPLY))
    assert seen[0] == [False] * (len(PROMPT) - 1) + [True]
    assert all(all(flags) for flags in seen[1:]) and any(len(flags) > 1 for flags in seen[1:])


def test_install_guards_and_uninstall():
    from hybridrag.agents.llm.draft import install, uninstall

    assert install(FakeLlama(), 0) is None
    every = FakeLlama()
    every._logits_all = True
    assert install(every, 4) is None and every.draft_model is None
    spec = FakeLlama()
    install(spec, 4, perf=no_perf)
    uninstall(spec)
    assert spec.draft_model is None and "eval" not in vars(spec) and "generate" not in vars(spec)
    assert decode(spec, PROMPT, len(REPLY)) == REPLY and spec._ctx.decoded[-1] == 1


def test_operator_setting_is_a_bounded_whole_number(monkeypatch):
    from hybridrag.agents.llm.draft import draft_tokens
    from hybridrag.agents.llm.errors import ModelConfigError

    monkeypatch.delenv("HYBRIDRAG_LOCAL_DRAFT", raising=False)
    assert draft_tokens() == 0  # off unless an operator turns it on
    monkeypatch.setenv("HYBRIDRAG_LOCAL_DRAFT", "8")
    assert draft_tokens() == 8
    for bad in ("-1", "eight", "65"):
        monkeypatch.setenv("HYBRIDRAG_LOCAL_DRAFT", bad)
        with pytest.raises(ModelConfigError, match="HYBRIDRAG_LOCAL_DRAFT"):
            draft_tokens()
