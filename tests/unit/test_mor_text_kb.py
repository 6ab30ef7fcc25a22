"""MoR on a text-only company KB (no triples, no relation types: every fact is a sentence of the
company's passage): textual edges both ways, names as written, a name playing the hop's type, the
topic linked by its exact name, and an answer that is never the question's own entity."""

from __future__ import annotations

import json

import pytest
from test_mor import node, plan, steps

from hybridrag.agents.mor.graph_first import topic_entities
from hybridrag.agents.mor.mentions import mentioned, names, relation_roots
from hybridrag.agents.mor.output import answer_of, is_own
from hybridrag.agents.mor.roles import Answer
from hybridrag.agents.mor.traversal import anchored, traverse_route
from hybridrag.graphs.mor import MoRContext, graph
from hybridrag.graphs.runtime import resolve_kb

ENTITIES = [
    ("Acme Corp", "company"),
    ("Globex", "company"),
    ("Initech", "company"),
    ("Phoenix", "company"),
    ("Hank Scorpio Fan Club", "company"),
    ("Wile Coyote", "person"),
    ("Wile", "person"),
    ("Hank Scorpio", "person"),
    ("Bill Lumbergh", "person"),
    ("Joseph H. Lewis", "person"),
    ("Cypress Creek", "city"),
    ("Austin", "city"),
    ("Rocket Skates", "product"),
    ("Founders Edition", "product"),
]
PASSAGES = {
    "Acme Corp": "Acme Corp was founded by Wile Coyote. Acme Corp is headquartered in Phoenix. "
    "Acme Corp makes Rocket Skates.",
    "Globex": "Globex was founded by Hank Scorpio. Globex is headquartered in Cypress Creek.",
    "Initech": "Initech was founded by Bill Lumbergh. Initech is headquartered in Austin. "
    "Hank Scorpio once visited Initech. Initech makes Founders Edition.",
    "Phoenix": "Phoenix was founded by Hank Scorpio. Phoenix was advised by Joseph H. Lewis.",
    "Hank Scorpio Fan Club": "Hank Scorpio Fan Club was founded by Wile Coyote.",
}


@pytest.fixture(scope="module")
def text_kb(tmp_path_factory) -> str:
    """A KB of entities and passages only (the graph has no edge)."""
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("text-kb-src")
    (src / "entities.jsonl").write_text(
        "\n".join(json.dumps({"id": n, "name": n, "type": t}) for n, t in ENTITIES), encoding="utf-8"
    )
    (src / "passages.jsonl").write_text(
        "\n".join(json.dumps({"id": f"p:{e}", "entity_id": e, "text": t}) for e, t in PASSAGES.items()),
        encoding="utf-8",
    )
    out = tmp_path_factory.mktemp("text-kb") / "kb"
    ingest(out, [], entities=src / "entities.jsonl", passages=src / "passages.jsonl", progress=False)
    return str(out)


def kb_of(path: str):
    return resolve_kb(MoRContext(kb=path))


def test_relation_roots_and_names_as_written(text_kb):
    assert relation_roots(["founded_by"]) == {"founde"} and relation_roots(["has_tags"]) == {"tag"}
    kb = kb_of(text_kb)
    said = names(kb, "Phoenix was advised by Joseph H. Lewis.")  # initials and the final period kept
    assert [[e.id for e in hits] for hits in said] == [["Phoenix"], ["Joseph H. Lewis"]]
    assert [[e.id for e in hits] for hits in names(kb, "Acme Corp was founded by Wile Coyote.")] == [
        ["Acme Corp"],
        ["Wile Coyote"],
    ]  # the longest name, not the person "Wile"


def test_backward_edges_read_the_texts_that_name_the_node(text_kb):
    kb = kb_of(text_kb)
    linked = mentioned(kb, ["Hank Scorpio"], "company", ["founded_by"])["Hank Scorpio"]
    # Initech only says he visited (no founding sentence); the fan club's name merely contains his
    assert sorted(linked) == [("Globex", False), ("Phoenix", False)]
    assert mentioned(kb, ["Hank Scorpio"], "company", ["founded_by"], backward=False) == {}
    assert mentioned(kb, ["Hank Scorpio"], "company", ["founded_by"], max_rows=0) == {}


def test_a_name_plays_the_hop_type_only_in_a_sentence_stating_the_relation(text_kb):
    kb = kb_of(text_kb)
    assert mentioned(kb, ["Acme Corp"], "city", ["headquartered_in"]) == {"Acme Corp": [("Phoenix", True)]}
    assert mentioned(kb, ["Globex"], "city", ["headquartered_in"]) == {"Globex": [("Cypress Creek", True)]}
    assert mentioned(kb, ["Acme Corp"], "city", ["located_near"]) == {}  # no stating sentence: types only
    # "Founders" inside a product's name states no founding: the product does not play a person
    assert mentioned(kb, ["Initech"], "person", ["founded_by"]) == {"Initech": [("Bill Lumbergh", True)]}


def test_the_topic_is_linked_by_its_exact_name_when_matching_missed_it(text_kb):
    kb = kb_of(text_kb)
    route = {
        "nodes": [{"type": "company", "restriction": "Phoenix"}, {"type": "person", "restriction": ""}],
        "relations": [["founded_by"]],
    }
    assert topic_entities(kb, route, ["Acme Corp"]) == {"Phoenix"}
    res = traverse_route(
        kb,
        "who founded Phoenix",
        route,
        seed_k=1,
        text_edges=True,
        topic_rule=lambda seeds: topic_entities(kb, route, seeds),
    )
    assert res["topics"] == ["Phoenix"] and "Phoenix" in res["seeds"]
    assert anchored(res["candidates"]["Hank Scorpio"])


def test_person_to_company_is_answered_from_the_companies_passages(text_kb, fake_llm):
    fake_llm(plan([node("person", "Hank Scorpio"), node("company", relation="founded_by")]))
    out = graph.invoke(
        {"question": "which companies did Hank Scorpio found"},
        context=MoRContext(kb=text_kb, llm="fake:test", max_iterations=1),
    )
    assert {r["name"] for r in out["ranked"][:2]} == {"Globex", "Phoenix"}
    assert out["answer"] in {"Globex", "Phoenix"}
    [layer] = steps(out, "traverse_route")[0]["layers"][1:]
    assert layer["mention"] == 2 and layer["anchored"] == 2
    top = out["ranked"][0]["id"]
    [walked] = [e for e in out["evidence"] if e["path"] and e["id"] == top]
    assert walked["source"] == "doc" and walked["path"] == [[top, "mentions", "Hank Scorpio"]]  # whose text names whom
    assert walked["text"] == f"Hank Scorpio → mentions (inverse) → {top}"


def test_the_answer_is_never_the_questions_own_entity():
    ranked = [{"id": "Acme Corp", "name": "Acme Corp"}, {"id": "Globex", "name": "Globex"}]
    assert answer_of(ranked, "which company shares a founder with Acme Corp", ["Acme Corp"]) == "Globex"
    assert answer_of(ranked, "who shares a founder with acme corp", []) == "Globex"  # named in the question
    assert answer_of(ranked[:1], "which company shares a founder with Acme Corp", ["Acme Corp"]) == ""
    assert answer_of([{"id": "g", "name": "g"}], "what is tagged as gravity", []) == "g"  # a whole phrase only
    assert is_own("acme corp", "who", ["Acme Corp"]) and not is_own("Globex", "who founded Acme Corp")


def test_a_route_walking_back_to_its_topic_does_not_answer_with_it(text_kb, fake_llm):
    question = "which company was founded by the founder of Acme Corp"
    walk_back = plan(
        [node("company", "Acme Corp"), node("person", relation="founded_by"), node("company", relation="founded_by")]
    )
    fake_llm(walk_back)
    out = graph.invoke(
        {"question": question}, context=MoRContext(kb=text_kb, llm="fake:test", max_iterations=1, ranking="paper")
    )
    assert "Acme Corp" in [r["name"] for r in out["ranked"]]  # the paper's pool keeps the topic
    assert out["answer"] and out["answer"] != "Acme Corp"
    fake_llm(walk_back, Answer(reasoning="It is the company named.", answer="Acme Corp"))
    qa = graph.invoke(
        {"question": question},
        context=MoRContext(kb=text_kb, llm="fake:test", max_iterations=1, ranking="paper", answer=True),
    )
    assert qa["answer"] == out["answer"]
    assert steps(qa, "generate_answer")[0]["decision"] == "the reply names the question's own entity: top entity"


def test_an_answer_the_question_words_is_given_when_it_is_all_the_route_reached():
    """Not an empty answer: the rating "good" a route reached is the answer to "is X considered good"."""
    good = [{"id": "good", "name": "good", "source": "kg"}]
    assert answer_of(good, "is The Lookout considered good", ["The Lookout"]) == "good"
    lookout = [{"id": "The Lookout", "name": "The Lookout", "source": "kg"}]
    assert answer_of(lookout, "is The Lookout considered good", ["The Lookout"]) == ""  # only the topic: none
