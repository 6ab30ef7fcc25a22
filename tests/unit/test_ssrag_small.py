"""SSRAG with a small model: rules for the roles a 135M model cannot do, names constrained.

The small model is a scripted fake named like the llama.cpp integration (it records the grammar
schema of each call) registered as ``local:tiny``; ``judge=auto`` then takes the rules. The
paper's roles with a model that is not small stay as tests/unit/test_ssrag.py runs them.
"""

from __future__ import annotations

import pytest
from fake_chat import ChatLlamaCpp, ScriptedChatModel

from hybridrag.agents.ssrag import unify as uni
from hybridrag.agents.ssrag.context import check_choices
from hybridrag.agents.ssrag.small import constrained, entity_choices, rule_intent, small
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.graphs.ssrag import SSRAGContext, graph


@pytest.fixture
def tiny_model(tiny_llama):
    """Factory: a scripted llama.cpp-like model registered as ``local:tiny`` (conftest ``tiny_llama``)."""
    return tiny_llama


def run(kb: str, question: str, **kw) -> dict:
    ctx = SSRAGContext(kb=kb, llm=kw.pop("llm", "local:tiny"), examples="none", **kw)
    return graph.invoke({"question": question}, context=ctx)


def step(out: dict, node: str) -> dict:
    return next(s for s in out["trace"] if s["node"] == node)


def test_one_kb_name_makes_a_run_without_any_llm_call(tiny_kb, tiny_model, monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    tiny_model()  # any call would fail: the script is empty
    out = run(tiny_kb, "which movies did Tom Hanks act in")
    assert out["usage"].get("llm_calls", 0) == 0
    assert step(out, "extract_entities")["fallback"] == "one KB name in the question: taken without a call"
    for node in ("decompose_query", "detect_intent", "enhance_query", "route_query", "generate_answer"):
        assert step(out, node)["fallback"].startswith("judge rules (small model)"), node
    assert step(out, "route_query")["decision"] == "FACTUAL → local"
    assert step(out, "convert_graph_to_text")["decision"].endswith("(template)")
    assert step(out, "verify_answer")["decision"] == "accepted"
    assert out["answer"].split("; ")[0] == out["ranked"][0]["name"] and "Tom Hanks" not in out["answer"]  # a list


def test_two_kb_names_ask_the_extractor_within_them(tiny_kb, tiny_model, monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    model = tiny_model(
        '{"entities": [{"name": "Kevin Bacon", "type": "person"}, {"name": "Tom Hanks", "type": "person"}]}'
    )
    out = run(tiny_kb, "which films did Tom Hanks and Kevin Bacon both star in")
    assert {r: v["llm_calls"] for r, v in out["usage"]["by_role"].items()} == {"entity_extractor": 1}
    schema = model.formats[0]["schema"]
    item = schema["$defs"]["NamedEntity"]["properties"]
    assert sorted(item["name"]["enum"]) == ["Kevin Bacon", "Tom Hanks"] and "person" in item["type"]["enum"]
    assert len(step(out, "extract_entities")["linked"]) == 2


def test_entity_choices_fall_back_to_spans_and_name_the_kb_types(tiny_kb):
    kb = resolve_kb(SSRAGContext(kb=tiny_kb))
    choices = entity_choices(kb, "who wrote Zorblax")
    assert "Zorblax" in choices["entities.name"] and "person" in choices["entities.type"]
    assert entity_choices(kb, "who directed Big")["entities.name"] == ["Big"]


def test_rule_intent_has_the_detect_intent_shape():
    cues = rule_intent("Tom Hanks films")
    assert cues["intent"] == "what" and cues["subtopics"] == [] and cues["recency"] is False
    assert rule_intent("what did Tom Hanks do this week")["recency"] is True


@pytest.mark.parametrize(
    ("judge", "llm", "rules"),
    [
        ("auto", "local:smollm2", True),
        ("auto", "openai:gpt-4o", False),
        ("llm", "local:smollm2", False),
        ("rules", "openai:gpt-4o", True),
        ("auto", "openai:qwen2.5:1.5b-instruct", True),
    ],
)
def test_small_follows_the_judge_setting(judge, llm, rules):
    ctx = SSRAGContext(kb="x", llm=llm, judge=judge)
    assert small(ctx) is rules
    assert constrained(ctx, ScriptedChatModel()) is rules  # not llama.cpp: constrained only under the rules
    assert constrained(ctx, ChatLlamaCpp())  # llama.cpp: always decodes within names


def test_judge_llm_with_llama_cpp_chooses_the_answer_among_context_names(tiny_kb):
    model = ChatLlamaCpp(script=['{"answer": "Apollo 13"}'])
    items = [
        {
            "id": n,
            "kind": "entity",
            "name": n,
            "text": f"{n} stars Tom Hanks.",
            "source": "kg",
            "path": [],
            "score": 1.0,
        }
        for n in ("Tom Hanks", "Big", "Apollo 13")
    ]
    text, usage, note = uni.generate(
        model, "which movies did Tom Hanks act in", items, "function_calling", own=["Tom Hanks"], choose=True
    )
    assert (text, note, usage["llm_calls"]) == ("Apollo 13", None, 1)
    assert model.formats[0]["schema"]["properties"]["answer"]["enum"] == ["Big", "Apollo 13"]


def test_unknown_judge_is_refused():
    with pytest.raises(ValueError, match="unknown ssrag judge 'maybe'"):
        check_choices(SSRAGContext(kb="x", judge="maybe"))


class NamesKB:
    """A KB stand-in with names only: ``graph.lookup`` (case-folded) and ``name``."""

    def __init__(self, names: list[str]):
        self.names = {n.casefold(): n for n in names}
        self.graph = self

    def lookup(self, name: str) -> list:
        found = self.names.get(name.casefold())
        return [type("E", (), {"id": found, "name": found, "aliases": ()})()] if found else []

    def name(self, eid: str) -> str:
        return eid


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("what was the release date of the movie Railroaded!", ["Railroaded!"]),
        ("Albert S. Rogell was the director of which movies", ["Albert S. Rogell"]),
        ("the film Railroaded! was directed by who", ["film", "Railroaded!"]),
        ("who directed Railroaded?", ["Railroaded"]),
        ("who directed Are You Scared?", ["Are You Scared?"]),
        ("which films did Takeshis' star", ["Takeshis'"]),
    ],
)
def test_known_names_keep_the_punctuation_a_name_is_written_with(question, names):
    from hybridrag.agents.ssrag.correct import known_names

    kb = NamesKB(["Railroaded!", "Railroaded", "Albert S. Rogell", "film", "S", "Are You Scared?", "Takeshis'"])
    assert known_names(kb, question) == names


def _item(name: str, facts: list[str]) -> dict:
    return {
        "id": name,
        "kind": "entity",
        "name": name,
        "text": " ".join(facts),
        "source": "kg",
        "path": facts,
        "score": 1.0,
    }


def test_rule_answer_takes_the_context_the_nearest_example_relation_states():
    from hybridrag.agents.shots import SolvedExample
    from hybridrag.agents.ssrag.small import rule_answer

    ex = SolvedExample(
        question="who directed Big",
        masked="who directed <E>",
        topic=("Big",),
        topic_types=("movie",),
        relations=("directed_by",),
        answer_type="person",
        answers=("Penny Marshall",),
        source="user",
        directions=("out",),
    )
    items = [
        _item("Halls of Montezuma", ["Halls of Montezuma directed by Lewis Milestone"]),
        _item("Robert Wagner", ["Halls of Montezuma starred actors Robert Wagner"]),
        _item("Lewis Milestone", ["Halls of Montezuma directed by Lewis Milestone"]),
    ]
    answer, order, why = rule_answer(items, {"Halls of Montezuma"}, [ex])
    assert answer == "Lewis Milestone" and [i["name"] for i in order][:2] == ["Lewis Milestone", "Robert Wagner"]
    assert "directed by" in why
    inverse = SolvedExample(**{**ex.__dict__, "directions": ("in",)})  # the answer is the head: "<name> directed by"
    assert rule_answer(items, {"Halls of Montezuma"}, [inverse])[0] == "Robert Wagner"  # no match: top context
    assert rule_answer(items, {"Halls of Montezuma"}, [])[2] == "judge rules (small model): the top context's name"


def test_written_spans_keep_a_final_question_mark_or_apostrophe_of_a_name():
    from hybridrag.tools.names import written_spans

    kb = NamesKB(["Are You Scared?", "Takeshis'", "Big"])
    assert written_spans(kb, "who directed Are You Scared?") == ["Are You Scared?"]
    assert written_spans(kb, "which films did Takeshis' star") == ["Takeshis'"]
    assert written_spans(kb, 'who directed "Big"?') == ["Big"]  # quotes and the question's own ? stripped
