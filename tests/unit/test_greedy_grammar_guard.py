"""The best-token-first grammar hook leaves a llama-cpp-python without the internals it uses alone."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp")

from hybridrag.agents.llm import greedy_grammar  # noqa: E402


class _OtherLlama:
    """A Llama of a version without ``_init_sampler``."""


class _Llama:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def _init_sampler(self, **kw):  # noqa: ANN003
        self.calls.append(kw)
        return "own chain"


def test_a_version_without_the_hook_point_is_left_as_it_is():
    llama = _OtherLlama()
    greedy_grammar.install(llama)
    assert not hasattr(llama, "_init_sampler")


@pytest.mark.parametrize(
    "kw",
    [
        {"grammar": None, "temp": 0.0},
        {"grammar": object(), "temp": 0.7},
        {"grammar": object(), "temp": 0.0, "logits_processor": [print]},
        {"grammar": object(), "temp": 0.0, "mirostat_mode": 2},
    ],
)
def test_calls_that_are_not_greedy_grammar_calls_keep_the_own_sampler(kw):
    llama = _Llama()
    greedy_grammar.install(llama)
    assert llama._init_sampler(**kw) == "own chain" and llama.calls == [kw]
