"""The judge setting: small-model detection, and the non-LLM decisions of HybGRAG's validator /
commentor and HydraRAG's answer check (accept and reject cases), on the tiny real KB."""

from __future__ import annotations

import pytest

from hybridrag.agents.hybgrag import critic, validator
from hybridrag.agents.hybgrag.paths import path_retrieve
from hybridrag.agents.hybgrag.report import reference_dicts
from hybridrag.agents.hybgrag.retrieval import link_action
from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity, Validation, check_action
from hybridrag.agents.hydrarag.answering import _judged, rule_check
from hybridrag.agents.hydrarag.context import HydraRAGContext
from hybridrag.agents.llm.constrained import non_empty, with_choices
from hybridrag.agents.llm.judge import is_small_model, model_billions, rules_on_unusable, use_rules
from hybridrag.graphs.hybgrag import HybGRAGContext
from hybridrag.kb.base import open_kb

Q = "which movies did Tom Hanks act in"


class NoCalls:
    """A model that fails the test when any role asks it."""

    def __getattr__(self, name):
        raise AssertionError(f"the LLM was asked ({name}) although the rules judge")


@pytest.mark.parametrize(
    ("spec", "small"),
    [
        ("local:smollm2", True),
        ("openai:qwen2.5:1.5b-instruct", True),
        ("openai:SmolLM2-360M-Instruct", True),
        ("openai:llama3.2:3b", True),
        ("openai:llama-3.1-8b-instruct", False),
        ("openai:gpt-4o-mini", False),
        ("fake:test", False),
        ("oracle:p=0.3", False),
    ],
)
def test_small_models_are_local_or_name_a_size_of_at_most_3b(spec, small):
    assert is_small_model(spec) is small


def test_model_size_is_read_from_the_last_size_tag():
    assert model_billions("openai:SmolLM2-135M-Instruct") == pytest.approx(0.135)
    assert model_billions("openai:qwen2.5:7b") == 7.0 and model_billions("openai:gpt-4o") is None


def test_auto_picks_rules_for_a_local_model_and_the_llm_for_an_api_model():
    assert use_rules("auto", "local:smollm2") and not use_rules("auto", "openai:gpt-4o-mini")
    assert use_rules("rules", "openai:gpt-4o-mini") and not use_rules("llm", "local:smollm2")
    assert rules_on_unusable("auto") and not rules_on_unusable("llm")
    with pytest.raises(ValueError, match="judge must be one of auto, llm, rules"):
        use_rules("maybe", "local:smollm2")


def test_contexts_refuse_an_unknown_judge(tiny_kb):
    with pytest.raises(ValueError, match="judge"):
        HybGRAGContext(kb=tiny_kb, judge="coin")
    with pytest.raises(ValueError, match="judge"):
        HydraRAGContext(kb=tiny_kb, judge="coin")


def _case(kb, topics, relations, walked=None, module="hybrid"):
    """An action (router's relations) and what the hybrid module returned walking ``walked``."""
    action = link_action(
        kb,
        check_action(
            RouterAction(
                module=module, entities=[TopicEntity(name=n, type=t) for n, t in topics], relations=list(relations)
            ),
            kb.graph.schema(),
        ),
    )
    ids = [e["id"] for e in action["linked"]]
    res = path_retrieve(kb, Q, ids, list(walked or relations), len(walked or relations), 5)
    facts = {"module": res.module, "intersection": res.intersection, "unused_relations": res.unused_relations}
    return action, facts, reference_dicts(kb, res.references)


def test_validator_rule_accepts_the_routers_path_with_the_expected_type(tiny_kb):
    kb = open_kb(tiny_kb)
    action, facts, refs = _case(kb, [("Tom Hanks", "person")], ["starred_actors"])
    assert validator.expected_types(kb, action, Q, use_bank=False) == {"movie"}
    verdict, why = validator.rule_verdict(kb, action, facts, refs, {"movie"})
    assert verdict == "yes" and "router's path" in why


def test_validator_rule_rejects_the_wrong_answer_type(tiny_kb):
    kb = open_kb(tiny_kb)
    action, facts, refs = _case(kb, [("Tom Hanks", "person")], ["starred_actors"])
    verdict, why = validator.rule_verdict(kb, action, facts, refs, {"person"})
    assert verdict == "no" and "asks for a person" in why


def test_validator_rule_rejects_a_reference_reached_along_another_path(tiny_kb):
    kb = open_kb(tiny_kb)
    action, facts, refs = _case(kb, [("Penny Marshall", "person")], ["starred_actors"], walked=["directed_by"])
    verdict, why = validator.rule_verdict(kb, action, facts, refs, set())
    assert verdict == "no" and "not the router's starred_actors" in why


def test_validator_rule_rejects_nothing_text_module_topic_and_unused_relations(tiny_kb):
    kb = open_kb(tiny_kb)
    action, facts, refs = _case(kb, [("Tom Hanks", "person")], ["starred_actors"])
    assert validator.rule_verdict(kb, action, facts, [], set())[0] == "no"
    assert "text module" in validator.rule_verdict(kb, action, {**facts, "module": "text"}, refs, set())[1]
    topic = [{**refs[0], "id": action["linked"][0]["id"], "name": "Tom Hanks"}]
    assert "topic entity" in validator.rule_verdict(kb, action, facts, topic, set())[1]
    unused = {**facts, "unused_relations": ["release_year"]}
    assert "not followed: release_year" in validator.rule_verdict(kb, action, unused, refs, set())[1]


def test_validator_rule_with_several_topics_needs_an_intersection(tiny_kb):
    kb = open_kb(tiny_kb)
    action, facts, refs = _case(kb, [("Tom Hanks", "person"), ("Kevin Bacon", "person")], ["starred_actors"])
    assert validator.rule_verdict(kb, action, {**facts, "intersection": 1}, refs, set())[0] == "yes"
    assert validator.rule_verdict(kb, action, {**facts, "intersection": 0}, refs, set())[0] == "no"


def test_auto_judge_with_a_local_model_never_asks_the_llm(tiny_kb):
    kb = open_kb(tiny_kb)
    action, facts, refs = _case(kb, [("Tom Hanks", "person")], ["starred_actors"])
    ctx = HybGRAGContext(kb=tiny_kb, llm="local:smollm2", examples="bundled")
    state = {"question": Q, "action": action, "retrieval": facts}
    verdict, why, shots, calls = validator.judge_retrieval(kb, ctx, NoCalls(), state, refs)
    assert (verdict, shots, calls) == ("yes", [], {}) and why.startswith("rule:")
    diagnosis = critic.rule_diagnosis(ctx, action, facts)
    assert diagnosis is not None and diagnosis.source == "rule" and diagnosis.error_types == ["missing_entity"]


def test_auto_judge_with_an_api_model_asks_the_llm_and_falls_back_to_rules(tiny_kb, fake_llm):
    kb = open_kb(tiny_kb)
    action, facts, refs = _case(kb, [("Tom Hanks", "person")], ["starred_actors"])
    state = {"question": Q, "action": action, "retrieval": facts}
    ctx = HybGRAGContext(kb=tiny_kb, llm="openai:gpt-4o-mini", examples="bundled", validator_examples=0)
    no = Validation(reasoning="does not fit", verdict="no")
    verdict, why, _, calls = validator.judge_retrieval(kb, ctx, fake_llm(no), state, refs)
    assert (verdict, why, calls["by_role"]["validator"]["llm_calls"]) == ("no", "does not fit", 1)
    verdict, why, _, _ = validator.judge_retrieval(kb, ctx, fake_llm("maybe", "perhaps"), state, refs)
    assert verdict == "yes" and why.startswith("unparseable validator output; rule:")
    paper = HybGRAGContext(kb=tiny_kb, llm="openai:gpt-4o-mini", judge="llm", validator_examples=0)
    assert validator.judge_retrieval(kb, paper, fake_llm("maybe", "perhaps"), state, refs)[0] == "no"
    assert critic.rule_diagnosis(paper, action, facts) is None


def _hydra_state(skyline: str, selected: list[dict] | None = None) -> dict:
    path = [{"relations": ["starred_actors"]}]
    return {
        "question": Q,
        "mentions": ["Tom Hanks"],
        "unlinked": [],
        "skyline": skyline,
        "topics": [{"id": "Tom Hanks", "name": "Tom Hanks", "mention": "Tom Hanks"}],
        "selected": selected
        if selected is not None
        else [{"source": "kg", "answers": ["Big"], "path": path, "text": "Tom Hanks starred in Big"}],
        "ranked": [{"id": "Big", "name": "Big", "kind": "entity"}],
        "probe": {"sources": ["kg"]},
    }


def test_answer_check_rule_accepts_a_path_that_follows_the_skyline(tiny_kb):
    kb = open_kb(tiny_kb)
    answer, why, missing = rule_check(kb, _hydra_state("Tom Hanks - starred actors - answer(movie)"), 0.8)
    assert (answer, missing) == ("Big", "") and why.startswith("rule:")


def test_answer_check_rule_rejects_paths_the_analysis_contradicts_or_no_kg_path(tiny_kb):
    kb = open_kb(tiny_kb)
    answer, why, missing = rule_check(kb, _hydra_state("Tom Hanks - release year - answer(year)"), 0.99)
    assert answer == "" and "skyline" in missing
    answer, why, _ = rule_check(kb, _hydra_state("Tom Hanks - starred actors - answer(movie)", []), 0.8)
    assert answer == "" and "no selected knowledge-graph path" in why


def test_hydrarag_auto_judge_with_a_local_model_never_asks_the_llm(tiny_kb):
    kb = open_kb(tiny_kb)
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:smollm2")
    answer, _, _, calls = _judged(_hydra_state("Tom Hanks - starred actors - answer(movie)"), ctx, kb, NoCalls())
    assert (answer, calls) == ("Big", {})


def test_grammar_requires_the_constrained_lists():
    choices = {"entities.name": ["Tom Hanks"], "entities.type": ["person"], "relations": ["starred_actors"]}
    schema = non_empty(with_choices(RouterAction, choices), choices)
    assert {"entities", "relations", "module"} <= set(schema["required"])
    assert schema["properties"]["entities"]["minItems"] == 1 and schema["properties"]["relations"]["minItems"] == 1
    free = non_empty(with_choices(RouterAction, {"relations": []}), {"relations": []})
    assert "relations" not in free.get("required", []) and "minItems" not in free["properties"]["relations"]


def test_grammar_keeps_an_optional_scalar_optional():
    from hybridrag.agents.mor.roles import Plan

    choices = {"routes.nodes.type": ["movie", "person"], "routes.nodes.relation": ["directed_by"]}
    schema = non_empty(with_choices(Plan, choices), choices)
    node, route = schema["$defs"]["PlanNode"], schema["$defs"]["PlanRoute"]
    assert "relation" not in node.get("required", []) and route["properties"]["nodes"]["minItems"] == 1
    assert schema["properties"]["routes"]["minItems"] == 1 and "routes" in schema["required"]


def test_a_chat_model_object_is_judged_by_its_class_and_name():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from hybridrag.agents.llm.judge import is_small_model

    class ChatLlamaCppLike(FakeListChatModel):
        pass

    ChatLlamaCppLike.__name__ = "LocalChatLlamaCpp"
    assert is_small_model(ChatLlamaCppLike(responses=["x"]))  # runs through llama.cpp: local
    assert not is_small_model(FakeListChatModel(responses=["x"]))  # states no size


def test_a_small_model_is_shown_at_most_small_model_few_shot_examples(tiny_kb, tiny_llama, fake_llm):
    from hybridrag.agents.llm.judge import few_shot_count
    from hybridrag.graphs.hybgrag import graph as hybgrag_graph

    assert few_shot_count(10, 3, "local:smollm2") == 3 and few_shot_count(2, 3, "local:smollm2") == 2
    assert few_shot_count(10, 3, "openai:gpt-4o-mini") == 10 and few_shot_count(10, 3, "ollama:qwen2.5:7b") == 10
    reply = (
        '{"entities": [{"name": "Tom Hanks", "type": "person"}], "relations": ["starred_actors"], "module": "graph"}'
    )
    for spec, shown in (("local:tiny", 3), ("fake:test", 10)):
        (tiny_llama if spec == "local:tiny" else fake_llm)(reply, '{"reasoning": "r", "verdict": "yes"}')
        ctx = HybGRAGContext(kb=tiny_kb, llm=spec, examples="kb", max_iterations=1, judge="rules")
        out = hybgrag_graph.invoke({"question": Q}, context=ctx)
        route = next(s for s in out["trace"] if s["node"] == "route_question")
        assert len(route["examples"]) == shown, spec
