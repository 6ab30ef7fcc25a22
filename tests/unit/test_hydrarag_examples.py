"""HydraRAG on a non-movie KB: few-shot examples come from that KB's own bank (issue 10)."""

from __future__ import annotations

import json
import re

import pytest

from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag import shots as shots
from hybridrag.agents.shots import SolvedExample
from hybridrag.graphs.hydrarag import HydraRAGContext, graph
from hybridrag.prompts import hydrarag as P

TRIPLES = """\
Acme Corp|makes|Rocket Skates
Acme Corp|makes|Giant Magnet
Acme Corp|headquartered_in|Phoenix
Acme Corp|founded_by|Wile Coyote
Globex|makes|Doomsday Device
Globex|headquartered_in|Cypress Creek
Globex|founded_by|Hank Scorpio
Initech|makes|TPS Reports
Initech|headquartered_in|Austin
Initech|founded_by|Bill Lumbergh
Wile Coyote|born_in|Phoenix
Hank Scorpio|born_in|Austin
"""
TYPES = {
    "makes": ["company", "product"],
    "headquartered_in": ["company", "city"],
    "founded_by": ["company", "person"],
    "born_in": ["person", "city"],
}
PASSAGES = [{"id": "p:acme", "entity_id": "Acme Corp", "text": "Acme Corp makes Rocket Skates."}]
MOVIE_WORDS = re.compile(
    r"\b(movie|movies|film|films|director|directed|starred|actor|genre|Amelie|Apollo|"
    r"Tom Hanks|Kevin Bacon|Tremors|Big)\b",
    re.IGNORECASE,
)

Q = "which products does Globex make"


@pytest.fixture(scope="module")
def company_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("company-src")
    (src / "triples.txt").write_text(TRIPLES, encoding="utf-8")
    (src / "passages.jsonl").write_text("\n".join(json.dumps(p) for p in PASSAGES), encoding="utf-8")
    (src / "types.json").write_text(json.dumps(TYPES), encoding="utf-8")
    out = tmp_path_factory.mktemp("company-kb") / "kb"
    ingest(out, [src / "triples.txt"], passages=src / "passages.jsonl", type_map=src / "types.json", progress=False)
    return str(out)


def test_every_prompt_names_only_the_kbs_types_and_relations(company_kb, fake_llm):
    fake = fake_llm(
        R.TopicEntities(entities=["Globex"]),
        R.QuestionAnalysis(split_questions=[Q], skyline="Globex - makes - answer(product)"),
        R.SourceChoice(reasoning="graph", sources=["kg", "docs"]),
        R.TextPaths(paths=[R.TextPath(paragraph=1, path="Acme Corp - makes - Rocket Skates")]),
        R.Choice(reasoning="r", selected=[1]),
        R.Refinement(summary="Globex makes Doomsday Device."),
        R.AnswerCheck(reasoning="named", sufficient="yes", answer="Doomsday Device"),
    )
    out = graph.invoke(
        {"question": Q}, context=HydraRAGContext(kb=company_kb, llm="fake:test", use_web=False, doc_pool=1)
    )
    assert out["answer"] == "Doomsday Device"
    [detect] = [s for s in out["trace"] if s["node"] == "detect_sources"]
    assert len(detect["examples"]) == 2 and all(isinstance(q, str) and q for q in detect["examples"])
    systems = [c["messages"][0].content for c in fake.calls]
    shown = [s for s in systems if "Example: " in s]
    assert len(shown) >= 3  # topics, analysis, check (and paragraph → paths when a 1-hop example exists)
    for call in fake.calls:
        text = "\n".join(str(m.content) for m in call["messages"])
        assert not MOVIE_WORDS.search(text), MOVIE_WORDS.search(text)
    named = " ".join(shown)
    assert any(r.replace("_", " ") in named for r in TYPES) and any(
        t in named for t in ("company", "product", "city", "person")
    )


def test_bundled_examples_and_none():
    ex = SolvedExample(
        question="which city is Initech headquartered in",
        masked="which city is <E> headquartered in",
        topic=("Initech",),
        topic_types=("company",),
        relations=("headquartered_in",),
        answer_type="city",
        answers=("Austin",),
        source="schema",
    )
    state = shots.to_state([ex])
    assert shots.lines(state, "analysis", "kb", 2) == (
        "Example: question \"which city is Initech headquartered in\", topic entities ['Initech']: sub-questions "
        "['What city is linked to Initech by headquartered in?']; skyline \"Initech - headquartered in - "
        'answer(city)"'
    )
    assert 'paragraph 1 "Initech headquartered in Austin."' in shots.lines(state, "text_paths", "kb", 2)
    assert shots.lines(state, "check", "kb", 0) == ""
    assert shots.lines([], "topics", "bundled", 1) == P.BUNDLED["topics"][0]
    with pytest.raises(ValueError, match="examples must be kb or bundled, not 'movies'"):
        shots.choose(None, Q, "movies", 2)
    with pytest.raises(ValueError, match="examples must be one of kb, bundled"):
        HydraRAGContext(examples="movies")


def test_documents_of_an_entity_include_passages_naming_it(company_kb, monkeypatch):
    from hybridrag.agents.hydrarag.text import gather_docs
    from hybridrag.kb.base import open_kb

    kb = open_kb(company_kb)
    monkeypatch.setattr(kb, "dense_search", lambda *a, **k: [])  # only the lexical lookup can find it
    assert [d[0] for d in gather_docs(kb, ["Rocket Skates"], "zzz", 1)] == ["p:acme"]  # attached to Acme Corp
    assert gather_docs(kb, ["Rocket Skates"], "zzz", 0) == []  # pool 0: attached passages only


def test_sentences_do_not_end_at_initials_or_titles():
    from hybridrag.agents.hydrarag.text import sentences

    text = (
        "In Old Oklahoma was directed by Albert S. Rogell. Dr. No stars Sean Connery! Is it? Yes. "
        "Railroaded! was released in 1947."
    )
    assert sentences(text) == [
        "In Old Oklahoma was directed by Albert S. Rogell.",
        "Dr. No stars Sean Connery!",
        "Is it?",
        "Yes.",
        "Railroaded! was released in 1947.",
    ]
