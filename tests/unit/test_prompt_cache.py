"""agents.llm.prompt_cache without a model: when the slim states are installed, and the cache's size setting."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python")


class FakeLlama:
    """The attributes prompt_cache.install looks at, and ``set_cache``."""

    def __init__(self, logits_all: bool = False) -> None:
        self._ctx = object()
        self._n_vocab, self._seed, self._requires_eval, self.n_tokens = 10, 0, False, 0
        self.input_ids = []
        self._logits_all = logits_all
        self.cache = None

    def set_cache(self, cache) -> None:
        self.cache = cache


def test_install_puts_slim_states_on_a_greedy_model():
    from hybridrag.agents.llm.prompt_cache import install

    llama = FakeLlama()
    assert install(llama, 8) is True
    assert llama.cache.capacity_bytes == 8 << 20
    assert {"save_state", "load_state"} <= set(vars(llama))


def test_no_cache_at_zero_and_own_states_with_logits_all_or_when_asked():
    from hybridrag.agents.llm.prompt_cache import install

    off = FakeLlama()
    assert install(off, 0) is False and off.cache is None
    for llama, slim in ((FakeLlama(logits_all=True), True), (FakeLlama(), False)):
        assert install(llama, 8, slim=slim) is False
        assert llama.cache is not None and "save_state" not in vars(llama)


def test_cache_size_setting_names_a_bad_value(monkeypatch):
    from hybridrag.agents.llm.models import ModelConfigError
    from hybridrag.agents.llm.prompt_cache import prompt_cache_mb

    monkeypatch.setenv("HYBRIDRAG_LOCAL_PROMPT_CACHE_MB", "64")
    assert prompt_cache_mb() == 64
    monkeypatch.setenv("HYBRIDRAG_LOCAL_PROMPT_CACHE_MB", "-1")
    with pytest.raises(ModelConfigError, match="PROMPT_CACHE_MB must be a whole number of MB, not '-1'"):
        prompt_cache_mb()
