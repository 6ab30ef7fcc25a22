"""hybridrag.agents.llm.draft with the real bundled SmolLM2-135M: a grammar call decoded with prompt-lookup
drafts keeps drafted tokens, counts them consistently, and replies within the schema (no network).

Whether the text equals plain decoding is measured, not asserted: llama.cpp's logits for a token
differ slightly with how tokens were batched, so a near tie may flip (docs/benchmarks_smollm_speed.md).
"""

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
EXAMPLES = (
    'Q: who wrote Alien -> {"relation": "written_by", "entity": "Alien"}\n'
    'Q: who starred in Heat -> {"relation": "starred_actors", "entity": "Heat"}\n'
    'Q: when was Heat released -> {"relation": "release_year", "entity": "Heat"}\n'
)


def test_drafts_are_kept_and_counted_and_the_reply_stays_in_the_schema():
    assert importlib.util.find_spec("llama_cpp") is not None, "needs: pip install 'hybridrag[local]'"
    from hybridrag.agents.llm.draft import accepted
    from hybridrag.agents.llm.models import local_model

    llama = local_model("smollm2", draft=8).client
    stats = llama.hybridrag_draft_stats
    for question in ("who directed Heat", "who wrote Heat"):
        reply = llama.create_chat_completion(
            messages=[
                {"role": "system", "content": "Reply with JSON naming the relation and the entity.\n" + EXAMPLES},
                {"role": "user", "content": f"Q: {question} ->"},
            ],
            temperature=0.0,
            max_tokens=40,
            response_format={"type": "json_object", "schema": SCHEMA},
        )
        data = json.loads(reply["choices"][0]["message"]["content"])
        assert data["relation"] in SCHEMA["properties"]["relation"]["enum"]
        assert data["entity"] in SCHEMA["properties"]["entity"]["enum"]
        call = stats.calls[-1]
        assert call["generated"] >= reply["usage"]["completion_tokens"] > 3  # the end token is generated, not shown
        assert 0 < accepted(call) <= call["drafted"]  # the examples' keys and names were drafted and kept
        assert call["batches"] + 1 < call["generated"]  # fewer decode steps than tokens
    assert stats.calls[-1]["prompt_tokens"] == reply["usage"]["prompt_tokens"]
