"""Router (HybGRAG) prompt: the part fixed for a KB is a prefix shared by every question, the
per-question parts (retrieved examples, the question) come last (llama.cpp then evaluates only
those: ``python -m benchmarks smollm-speed``); the MoR planner keeps its examples before the schema."""

from __future__ import annotations

import json
import os

from hybridrag.agents.hybgrag import roles as hybgrag
from hybridrag.agents.mor import roles as mor
from hybridrag.kb.model import RelationType, Schema

SCHEMA = Schema(
    entity_types={"movie": 3, "person": 2, "year": 1},
    relation_types={
        "directed_by": RelationType("directed_by", ("movie",), ("person",)),
        "release_year": RelationType("release_year", ("movie",), ("year",)),
    },
)
HEAT, ALIEN = "who directed Heat", "when was Alien released"
ROUTER_SHOTS = {
    HEAT: [
        {
            "question": "who directed Ran",
            "entities": [{"name": "Ran", "type": "movie"}],
            "relations": ["directed_by"],
            "module": "hybrid",
        }
    ],
    ALIEN: [
        {
            "question": "when was Big released",
            "entities": [{"name": "Big", "type": "movie"}],
            "relations": ["release_year"],
            "module": "hybrid",
        },
        {
            "question": "what year is Up from",
            "entities": [{"name": "Up", "type": "movie"}],
            "relations": ["release_year"],
            "module": "hybrid",
        },
    ],
}
PLAN = {"routes": [{"nodes": [{"type": "movie", "restriction": "Ran"}, {"type": "person", "relation": "directed_by"}]}]}
PLANNER_SHOTS = {
    HEAT: [{"question": "who directed Ran", "plan": PLAN}],
    ALIEN: [
        {
            "question": "when was Big released",
            "plan": {
                "routes": [
                    {"nodes": [{"type": "movie", "restriction": "Big"}, {"type": "year", "relation": "release_year"}]}
                ]
            },
        }
    ],
}


def _shared(a: list[dict], b: list[dict]) -> str:
    """The text two conversations share from their start (system prompt, then the user turn)."""
    assert a[0] == b[0]  # the same system prompt
    return os.path.commonprefix([a[1]["content"], b[1]["content"]])


def test_router_prompt_puts_the_kb_part_first_and_the_examples_and_question_last():
    heat, alien = (hybgrag.router_first_messages(q, SCHEMA, ROUTER_SHOTS[q]) for q in (HEAT, ALIEN))
    shared = _shared(heat, alien)
    ents, rels = hybgrag.schema_prompt_parts(SCHEMA)
    fixed = f'Entity types: {ents}\nRelation types: {rels}\nExamples:\n<data example="1">\nquestion: '
    assert shared.startswith(fixed) and len(shared) < len(fixed) + 3  # the examples differ from here
    user = alien[1]["content"]
    assert user.endswith(f"of this question, then choose the module.\nQuestion: {ALIEN}")
    assert (
        user.index("Relation types:")
        < user.index("question: when was Big released")
        < user.index("question: what year is Up from")
        < user.index(f"Question: {ALIEN}")
    )
    # an example's action is the same JSON, written without spaces
    answer = '{"entities":[{"name":"Big","type":"movie"}],"relations":["release_year"],"module":"hybrid"}'
    assert f"answer: {answer}" in user and json.loads(answer)["relations"] == ["release_year"]


def test_planner_prompt_keeps_the_examples_before_the_schema():
    # the schema first cost SmolLM2 its topic node on person / tag questions (prompts.mor.PLANNER)
    heat, alien = (mor.planner_messages(q, SCHEMA, PLANNER_SHOTS[q]) for q in (HEAT, ALIEN))
    ents, rels = mor.schema_parts(SCHEMA)
    assert _shared(heat, alien).startswith("Examples:\nQuestion: ")
    compact = json.dumps(PLAN, separators=(",", ":"))  # no spaces: fewer tokens to read and to write
    assert heat[1]["content"] == (
        f"Examples:\nQuestion: who directed Ran\nPlan: {compact}\n\n"
        f"Entity types: {ents}\nRelation types: {rels}\nQuestion: {HEAT}\nPlan:"
    )


def test_planner_schema_is_left_out_only_for_a_small_constrained_model_shown_examples():
    compact = json.dumps(PLAN, separators=(",", ":"))
    bare = mor.planner_messages(HEAT, SCHEMA, PLANNER_SHOTS[HEAT], "paths", show_schema=False)
    assert bare[1]["content"] == f"Examples:\nQuestion: who directed Ran\nPlan: {compact}\n\nQuestion: {HEAT}\nPlan:"
    assert mor.schema_shown("auto", "local:smollm2", True, 3) is False
    assert mor.schema_shown("auto", "local:smollm2", False, 3) is True  # no grammar: the list is all it has
    assert mor.schema_shown("auto", "local:smollm2", True, 0) is True  # no examples to show the form
    assert mor.schema_shown("auto", "openai:gpt-4o-mini", True, 3) is True  # not known to be small
    assert mor.schema_shown("full", "local:smollm2", True, 3) is True
    assert mor.schema_shown("off", "openai:gpt-4o-mini", False, 0) is False
