"""hybridrag.agents.llm.greedy_grammar with the real bundled SmolLM2-135M: the same greedy picks as
llama-cpp-python's own grammar sampling, both when the model's best token is allowed and when
the grammar refuses it (no network)."""

from __future__ import annotations

import importlib.util
import json

import pytest

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "object",
    "properties": {
        "relation": {"type": "string", "enum": ["directed_by", "written_by", "starred_actors", "release_year"]},
        "entity": {"type": "string", "enum": ["Heat", "Michael Mann", "1995"]},
    },
    "required": ["relation", "entity"],
}
PROMPTS = [
    "Who directed the movie Heat? Reply with JSON naming the relation and the entity.",
    "Write a short poem about the sea.",  # the model's own first tokens are prose: the grammar refuses them
]


def _replies(llama, calls: list[int]) -> list[str]:
    out = []
    for prompt in PROMPTS:
        reply = llama.create_chat_completion(
            messages=[{"role": "user", "content": prompt}],
            temperature=0.0,
            max_tokens=40,
            response_format={"type": "json_object", "schema": SCHEMA},
        )
        out.append(reply["choices"][0]["message"]["content"])
        calls.append(reply["usage"]["completion_tokens"])
    return out


def test_best_token_check_picks_what_the_full_grammar_picks():
    assert importlib.util.find_spec("llama_cpp") is not None, "needs: pip install 'hybridrag[local]'"
    from hybridrag.agents.llm.greedy_grammar import install
    from hybridrag.agents.llm.models import load_chat_model

    llama = load_chat_model("local:smollm2").client  # loaded with the check installed
    assert "_init_sampler" in vars(llama)
    tokens: list[int] = []
    fast = _replies(llama, tokens)
    del llama._init_sampler  # llama-cpp-python's own chain: every vocabulary entry checked each token
    try:
        full = _replies(llama, tokens)
    finally:
        install(llama)
    assert fast == full and all(t > 3 for t in tokens)
    for text in fast:
        data = json.loads(text)
        assert data["relation"] in SCHEMA["properties"]["relation"]["enum"]
        assert data["entity"] in SCHEMA["properties"]["entity"]["enum"]
