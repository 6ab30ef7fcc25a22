"""Question loaders, the STaRK-layout fixture, MetaQA-hybrid splits and relevance judging."""

from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from hybridrag.evals import hybrid
from hybridrag.evals.datasets import (
    Question,
    load_jsonl,
    load_metaqa,
    load_questions,
    load_stark_csv,
    sample,
    stark_kb,
    with_answer_names,
)
from hybridrag.evals.relevance import Judge
from hybridrag.kb.base import open_kb
from hybridrag.kb.model import KBError, MalformedInputError, Triple

STARK = Path(__file__).parents[1] / "fixtures" / "stark_tiny"


@pytest.fixture
def fake_embeddings(monkeypatch):
    """Ingest with a deterministic fake embedding model instead of MiniLM."""
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: DeterministicFakeEmbedding(size=8))


def test_metaqa_strips_brackets_keeps_topic_qtype_and_hops(tmp_path):
    (tmp_path / "dev_2hop.txt").write_text(
        "who directed the films [Tom Hanks] starred in\tRon Howard|Robert Zemeckis\n\nwhat genre is [Heat]\tCrime\n",
        encoding="utf-8",
    )
    (tmp_path / "dev_2hop_qtype.txt").write_text("actor_to_movie_to_director\n\nmovie_to_genre\n", encoding="utf-8")
    qs = load_metaqa(tmp_path / "dev_2hop.txt")
    assert [q.id for q in qs] == ["dev_2hop:1", "dev_2hop:3"]
    assert qs[0].question == "who directed the films Tom Hanks starred in"
    assert qs[0].topic == "Tom Hanks" and qs[0].hops == 2
    assert qs[0].answers == ("Ron Howard", "Robert Zemeckis")
    assert qs[0].qtype == "actor_to_movie_to_director" and qs[1].qtype == "movie_to_genre"


def test_metaqa_release_names_give_qtypes_and_hops_from_the_type(tmp_path):
    # The MetaQA release: 2-hop/vanilla/qa_dev.txt beside qa_dev_qtype.txt (no hop count in the name).
    (tmp_path / "qa_dev.tsv").write_text(
        "who directed the films [Tom Hanks] starred in\tRon Howard\nwhat genre is [Heat]\tCrime\n", encoding="utf-8"
    )
    (tmp_path / "qa_dev_qtype.tsv").write_text("actor_to_movie_to_director\nmovie_to_genre\n", encoding="utf-8")
    (tmp_path / "qa_dev_qtype.txt").write_text("wrong_file\nwrong_file\n", encoding="utf-8")
    qs = load_questions(tmp_path / "qa_dev.tsv")
    assert [(q.qtype, q.hops) for q in qs] == [("actor_to_movie_to_director", 2), ("movie_to_genre", 1)]
    (tmp_path / "qa_test.txt").write_text("what genre is [Heat]\tCrime\n", encoding="utf-8")
    assert load_metaqa(tmp_path / "qa_test.txt")[0].hops is None  # no type, no hop count


def test_metaqa_malformed_lines_name_file_and_line(tmp_path):
    bad = tmp_path / "q.txt"
    bad.write_text("what is [X]\tY\nno tab here\n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"q\.txt:2: expected 'question<TAB>answers'"):
        load_metaqa(bad)
    bad.write_text("what is [X]\t \n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r":1: empty question or no answers"):
        load_metaqa(bad)
    (tmp_path / "q_qtype.txt").write_text("t1\n", encoding="utf-8")
    bad.write_text("what is [X]\tY\nwhat is [Z]\tW\n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"q_qtype\.txt:2: qtype file has fewer lines"):
        load_metaqa(bad)


def test_jsonl_questions_and_their_errors(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        '{"id": "q1", "question": "who?", "answers": "Ann"}\n'
        '{"question": "which?", "answers": ["B", "C"], "answer_ids": [7], "hops": 1}\n',
        encoding="utf-8",
    )
    qs = load_questions(path)
    assert qs[0] == Question("q1", "who?", ("Ann",))
    assert qs[1].id == "mine:2" and qs[1].answers == ("B", "C") and qs[1].answer_ids == ("7",)
    assert qs[1].hops == 1
    path.write_text('{"question": "a", "answers": ["x"]}\n\n{not json}\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"mine\.jsonl:3: invalid JSON"):
        load_jsonl(path)
    path.write_text('{"question": "a"}\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r":1: needs 'answers' or 'answer_ids'"):
        load_jsonl(path)


def test_stark_csv_fixture():
    qs = load_stark_csv(STARK / "qa.csv")
    assert [q.id for q in qs] == ["0", "1", "2"]
    assert qs[1].answer_ids == ("3", "4") and qs[1].answers == ()
    assert qs[1].question.startswith("What genes does lisinopril")
    assert load_questions(STARK / "qa.csv") == qs


def test_stark_csv_errors_name_the_line(tmp_path):
    path = tmp_path / "qa.csv"
    path.write_text('id,query,answer_ids\n0,ok,[1]\n1,bad ids,"[1,"\n', encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r"qa\.csv:3: answer_ids must be a list literal"):
        load_stark_csv(path)
    path.write_text("id,question\n0,x\n", encoding="utf-8")
    with pytest.raises(MalformedInputError, match=r":1: missing columns: answer_ids, query"):
        load_stark_csv(path)


def test_sample_is_seeded_and_nested():
    qs = [Question(str(i), f"q{i}", ("a",)) for i in range(50)]
    small, large = sample(qs, 5, seed=3), sample(qs, 20, seed=3)
    assert large[:5] == small and sample(qs, 5, seed=3) == small
    assert sample(qs, None) == qs and sample(qs, 99) == qs


def test_stark_skb_converts_into_a_kb_and_judges(tmp_path, fake_embeddings):
    kb_dir = stark_kb(STARK / "skb", tmp_path)
    assert stark_kb(STARK / "skb", tmp_path) == kb_dir  # built once
    kb = open_kb(kb_dir)
    assert kb.graph.counts() == {"entities": 7, "triples": 5}
    assert kb.graph.lookup("High Blood Pressure")[0].id == "2"
    qs = with_answer_names(load_stark_csv(STARK / "qa.csv"), kb.name)
    assert qs[1].answers == ("ACE", "AGTR1")
    judge = Judge.for_kb(kb)
    ranked = [
        {"id": "3", "kind": "entity"},
        {"id": "1", "kind": "entity"},
        {"id": "p", "kind": "passage", "text": "Losartan blocks agtr1 receptors."},
    ]
    assert judge.label(qs[1], ranked) == [["3"], [], ["4"]]
    with pytest.raises(KBError, match="lacks node_info.jsonl"):
        stark_kb(tmp_path, tmp_path)


def test_relevance_by_whole_phrase_and_reachable_ceiling(tmp_path, fake_embeddings):
    (tmp_path / "t.txt").write_text(
        "Heat|directed_by|Michael Mann\nHeat|starred_actors|Al Pacino\n"
        "Ali|directed_by|Michael Mann\nAli|release_year|2001\n",
        encoding="utf-8",
    )
    from hybridrag.kb.ingest import ingest

    ingest(tmp_path / "kb", [tmp_path / "t.txt"], progress=False)
    judge = Judge.for_kb(open_kb(tmp_path / "kb"))
    q = Question("1", "movies directed by the director of Heat", ("ali",), topic="Heat", hops=2)
    ranked = [
        {"id": "Ali", "kind": "entity"},
        {"id": "Heat", "kind": "entity"},
        {"id": "x", "kind": "passage", "text": "Ali was released in 2001."},
        {"id": "y", "kind": "passage", "text": "Alien is a film."},
    ]
    assert judge.label(q, ranked) == [["ali"], [], ["ali"], []]
    assert judge.reachable(q) == ["ali"]
    one_hop = Question("2", "?", ("2001",), topic="Heat", hops=1)
    assert judge.reachable(one_hop) == [] and judge.reachable(Question("3", "?", ("Ali",))) is None


def test_hybrid_split_holds_out_a_seeded_fraction():
    triples = [Triple(f"m{i}", "directed_by", f"d{i}") for i in range(10)]
    kept, held = hybrid.split_triples(triples, 0.5, seed=1)
    assert len(kept) == 5 and sorted(kept + held, key=triples.index) == triples
    assert hybrid.split_triples(triples, 0.5, seed=1) == (kept, held)
    assert hybrid.split_triples(triples, 1.0)[1] == [] and hybrid.split_triples(triples, 0.0)[0] == []
    with pytest.raises(ValueError):
        hybrid.split_triples(triples, 1.5)


def test_hybrid_kb_renders_held_out_triples_as_passages(tmp_path, monkeypatch, fake_embeddings):
    (tmp_path / "metaqa").mkdir()
    lines = [f"Movie {i}|directed_by|Director {i}\nMovie {i}|release_year|{1990 + i}\n" for i in range(6)]
    (tmp_path / "metaqa" / "kb.txt").write_text("".join(lines), encoding="utf-8")
    monkeypatch.setenv("HYBRIDRAG_DATASETS", str(tmp_path))
    monkeypatch.setenv("HYBRIDRAG_CACHE", str(tmp_path / "cache"))
    hybrid.metaqa_triples.cache_clear()
    try:
        kb_dir = hybrid.hybrid_kb(0.5, seed=0, progress=False)
        assert kb_dir.name == "metaqa-hybrid-c50-s0"
        kb = open_kb(kb_dir)
        assert kb.graph.counts() == {"entities": 18, "triples": 6}  # every entity stays
        assert kb.graph.get("Director 0").type == "person"
        passages = [d for d in kb.docs if d.kind == "passage"]
        held = hybrid.split_triples(hybrid.metaqa_triples(), 0.5, 0)[1]
        text = " ".join(d.text for d in passages)
        assert all(t.tail in text and t.head in text for t in held)
        assert {d.entity_id for d in passages} == {t.head for t in held}
    finally:
        hybrid.metaqa_triples.cache_clear()
