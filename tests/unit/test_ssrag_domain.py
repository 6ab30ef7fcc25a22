"""SSRAG on a non-movie KB: examples and entity kinds come from that KB, never from MetaQA."""

from __future__ import annotations

import re

import pytest

from hybridrag.agents.ssrag import shots
from hybridrag.agents.ssrag.augment import AugmentedQuery, IntentCues, KeyEntities, NamedEntity, SubQuestions
from hybridrag.agents.ssrag.retrieval import GraphText
from hybridrag.agents.ssrag.routing import RouteLabel
from hybridrag.agents.ssrag.unify import Answer, Redundancy
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.graphs.ssrag import SSRAGContext, graph

TRIPLES = """\
Acme Corp|makes|Rocket Skates
Acme Corp|makes|Giant Magnet
Acme Corp|employs|Wile Coyote
Globex|makes|Doomsday Device
Globex|employs|Hank Scorpio
Initech|makes|TPS Report Tool
Initech|employs|Peter Gibbons
"""
TYPES = {"makes": ["company", "product"], "employs": ["company", "person"]}
MOVIE_WORDS = re.compile(
    r"\b(movie|movies|film|films|actor|director|writer|directed_by|starred_actors|"
    r"written_by|has_genre|release_year|in_language|has_tags)\b",
    re.IGNORECASE,
)
QUESTION = "which products does Acme Corp make"


@pytest.fixture(scope="module")
def company_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("company-src")
    (src / "triples.txt").write_text(TRIPLES, encoding="utf-8")
    out = tmp_path_factory.mktemp("company-kb") / "kb"
    ingest(out, [src / "triples.txt"], type_map=TYPES, progress=False)
    return str(out)


def test_every_prompt_names_only_this_kbs_types(company_kb, fake_llm):
    fake = fake_llm(
        SubQuestions(sub_questions=[QUESTION]),
        KeyEntities(entities=[NamedEntity(name="Acme Corp", type="company")]),
        IntentCues(intent="which"),
        AugmentedQuery(query="Which products does Acme Corp make?"),
        RouteLabel(label="FACTUAL"),
        GraphText(text="Acme Corp makes Rocket Skates and Giant Magnet."),
        Redundancy(reasoning="None repeats.", redundant=[]),
        Answer(reasoning="Listed.", answer="Rocket Skates, Giant Magnet"),
    )
    out = graph.invoke(
        {"question": QUESTION},
        context=SSRAGContext(
            kb=company_kb, llm="fake:test", top_k=3, vector_k=3, graph_k=1, n_examples=2, max_iterations=1
        ),
    )
    assert out["answer"] == "Rocket Skates, Giant Magnet"
    shown = [s for s in out["trace"] if s["node"] == "decompose_query"][0]["examples"]
    assert len(shown) == 2 and all(q != QUESTION for q in shown)
    prompts = ["\n".join(str(m.content) for m in c["messages"]) for c in fake.calls]
    for p in prompts:
        assert not MOVIE_WORDS.search(p), MOVIE_WORDS.search(p).group(0)
    entity_prompt = prompts[1]
    assert "entities of these kinds: company, person, product." in entity_prompt
    assert "Solved examples from the same knowledge base:" in entity_prompt
    assert any(q in entity_prompt for q in shown) and re.search(r"\((company|person|product)\)", entity_prompt)


def test_zero_shot_is_the_paper_prompt_and_bad_choice_is_one_line(company_kb):
    kb = resolve_kb(SSRAGContext(kb=company_kb))
    assert shots.nearest(kb, QUESTION, 2, "none") == [] and shots.nearest(kb, QUESTION, 0, "kb") == []
    assert shots.decompose_shots([]) == "" and shots.entity_shots([]) == ""
    with pytest.raises(ValueError, match="examples must be one of"):
        shots.nearest(kb, QUESTION, 2, "bundled")
