"""Solved-example bank on a small NON-movie KB: masking, synthesis, nearest examples, bank_for."""

from __future__ import annotations

import json
import shutil

import pytest

from hybridrag.agents.shots import SolvedExample, bank_for, mask_question, synthesize
from hybridrag.agents.shots.bank import Bank
from hybridrag.agents.shots.walk import Walker

TRIPLES = """\
Acme|makes|Rocket Skates
Acme|makes|Giant Magnet
Acme|based_in|Springfield
Globex|makes|Hammock
Globex|makes|Doomsday Device
Globex|based_in|Cypress Creek
Initech|makes|TPS Report Software
Initech|based_in|Austin
Rocket Skates|made_of|Steel
Giant Magnet|made_of|Steel
Hammock|made_of|Cotton
Doomsday Device|made_of|Steel
Initech|supplies|Globex
Globex|supplies|Acme
Globex|makes|Zoom!
Zoom!|made_of|plutonium
Acme|sells|Hammock
Globex|sells|Hammock
Globex|sells|Doomsday Device
Globex|sells|Zoom!
"""
TYPES = {
    "makes": ("company", "product"),
    "based_in": ("company", "city"),
    "made_of": ("product", "material"),
    "supplies": ("company", "company"),
    "sells": ("company", "product"),
}
RELATIONS = set(TYPES)
ENTITY_TYPES = {"company", "product", "city", "material"}


@pytest.fixture(scope="session")
def company_kb_src(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A company / product KB built once with the real ingest (local MiniLM embeddings)."""
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("company-src")
    (src / "triples.txt").write_text(TRIPLES, encoding="utf-8")
    out = tmp_path_factory.mktemp("company-kb") / "kb"
    ingest(out, [src / "triples.txt"], type_map=dict(TYPES), progress=False)
    return str(out)


@pytest.fixture
def company_kb(company_kb_src, tmp_path):
    """A private copy of the company KB (tests write bank files into it), opened."""
    from hybridrag.kb.base import open_kb

    copy = tmp_path / "kb"
    shutil.copytree(company_kb_src, copy, symlinks=True)
    return open_kb(copy)


def test_mask_replaces_entity_spans_only(company_kb):
    assert mask_question("what does Acme make", company_kb) == "what does <E> make"
    assert mask_question("what is Rocket Skates made of?", company_kb) == "what is <E> made of?"
    assert mask_question("who supplies [Globex]", company_kb) == "who supplies <E>"
    assert (
        mask_question("which companies supply the makers of steel things", company_kb)
        == "which companies supply the makers of <E> things"
    )
    assert mask_question("what does Umbrella Corp make", company_kb) == "what does Umbrella Corp make"


def test_mask_keeps_punctuation_of_names_and_prefers_capitalised_mentions(company_kb):
    assert mask_question("who makes Zoom!", company_kb) == "who makes <E>"
    assert mask_question("which products are made of plutonium", company_kb) == "which products are made of <E>"
    # a lower-case mention beside a capitalised one is taken for an ordinary word
    assert mask_question("does Acme make plutonium things", company_kb) == "does <E> make plutonium things"


def test_mask_keeps_type_and_question_words(company_kb):
    # "product" and "company" are type words of this KB: never a mention on their own
    assert (
        mask_question("which product does the company Initech make", company_kb)
        == "which product does the company <E> make"
    )


def _walk_names(kb, ex: SolvedExample) -> set[str]:
    walker = Walker(kb.graph)
    topic = [e.id for e in kb.graph.lookup(ex.topic[0])]
    end = walker.walk(topic, list(zip(ex.relations, ex.directions, strict=True)))
    return {kb.name(i) for i in walker.ids(walker.of_type(end, ex.answer_type))}


def test_synthesis_uses_only_this_kbs_schema_and_entities(company_kb):
    examples = synthesize(company_kb, per_path=2, max_hops=3, seed=0)
    assert {e.hops for e in examples} == {1, 2, 3}
    for e in examples:
        assert set(e.relations) <= RELATIONS
        assert set(e.topic_types) <= ENTITY_TYPES and e.answer_type in ENTITY_TYPES
        assert e.source == "schema" and "<E>" in e.masked and e.topic[0] not in e.masked
        assert e.topic[0] in e.question
        assert not {"movie", "directed", "film", "actor"} & set(e.question.lower().split())
        assert set(e.answers) == _walk_names(company_kb, e)  # the answers are what the path reaches
    assert synthesize(company_kb, seed=0) == examples  # seeded


def test_synthesis_writes_questions_from_relation_words(company_kb):
    examples = synthesize(company_kb, per_path=5, max_hops=1, seed=0)
    made_by = [e for e in examples if e.relations == ("makes",) and e.directions == ("in",)]
    assert made_by and {e.masked for e in made_by} == {"which company that makes <E>", "what company makes <E>"}
    assert {e.answers for e in made_by} >= {("Acme",)} or {e.answers for e in made_by} >= {("Globex",)}


def test_nearest_masked_neighbour_has_the_question_path(company_kb):
    bank = Bank(company_kb, synthesize(company_kb, per_path=3, seed=0))
    top = bank.nearest("which company makes Hammock", 1)[0]
    assert top.relations == ("makes",)
    # examples about the same kind of topic: a product here, never a company's products
    assert {e.topic_types for e in bank.nearest("which company makes Hammock", 6)} == {("product",)}
    top = bank.nearest("what materials are the products that Initech makes made of", 1)[0]
    assert top.relations == ("makes", "made_of")
    assert len(bank.nearest("what does Acme make", 4)) == 4
    assert bank.nearest("what does Acme make", 0) == []


def test_nearest_skips_the_asked_question_and_prefers_role_outputs(company_kb):
    a = SolvedExample(
        "what does Acme make",
        "what does <E> make",
        ("Acme",),
        ("company",),
        ("makes",),
        "product",
        ("Rocket Skates",),
        "user",
    )
    b = SolvedExample(
        "where is Globex based",
        "where is <E> based",
        ("Globex",),
        ("company",),
        ("based_in",),
        "city",
        ("Cypress Creek",),
        "user",
        outputs={"router": {"relations": ["based_in"]}},
    )
    bank = Bank(company_kb, [a, b])
    assert bank.nearest("what does Acme make", 2) == [b]  # itself never: it would leak the answer
    assert bank.nearest("what does Initech make", 1) == [a]
    assert bank.nearest("what does Initech make", 1, role="router") == [b]
    assert bank.nearest("what does Initech make", 1, role="critic") == [a]  # no example has it: all


def test_by_type_prefers_distinct_paths(company_kb):
    by_type = Bank(company_kb, synthesize(company_kb, per_path=2, seed=0)).by_type(per_type=2)
    assert set(by_type) <= ENTITY_TYPES and "product" in by_type
    for examples in by_type.values():
        assert len(examples) <= 2
        if len(examples) == 2:
            assert examples[0].relations != examples[1].relations


def test_bank_for_synthesizes_once_without_a_bank_file(company_kb, monkeypatch):
    import hybridrag.agents.shots.bank as bank_mod

    bank = bank_for(company_kb)
    assert bank.examples and all(e.source == "schema" for e in bank.examples)
    assert bank_for(company_kb) is bank
    bank.nearest("what does Acme make", 1)
    assert (company_kb.directory / "schema-bank.vectors.npz").exists()
    # another process: the vectors come from the cache file, nothing is embedded again
    monkeypatch.setattr(bank_mod, "_MEMO", {})
    monkeypatch.setattr(bank_mod, "embed_matrix", lambda *a, **k: (_ for _ in ()).throw(AssertionError("embedded")))
    again = Bank(company_kb, list(bank.examples), cache=company_kb.directory / "schema-bank.vectors.npz")
    assert again.vectors().shape == bank.vectors().shape


def test_an_empty_built_bank_is_used_as_built(company_kb, monkeypatch):
    import hybridrag.agents.shots.bank as bank_mod
    import hybridrag.agents.shots.synth as synth_mod

    bank_mod.write_bank_file(bank_mod.bank_path(company_kb.directory), [])
    monkeypatch.setattr(synth_mod, "synthesize", lambda *a, **k: (_ for _ in ()).throw(AssertionError("synthesized")))
    assert len(bank_for(company_kb).examples) == 0  # `hybridrag bank build --synth 0` means no examples


def test_bank_leaves_out_examples_with_unknown_relations(company_kb):
    good = SolvedExample("q1", "q1", (), (), ("makes",), "product", (), "user")
    old = SolvedExample("q2", "q2", (), (), ("directed_by",), "person", (), "user")
    bank = Bank(company_kb, [good, old])
    assert bank.examples == [good] and bank.stale == 1


def test_a_tie_between_paths_follows_the_nearest_unambiguous_examples(company_kb):
    from hybridrag.agents.shots.solve import solve_all
    from hybridrag.evals.datasets import Question

    make = SolvedExample(
        "what does Initech make",
        "what does <E> make",
        ("Initech",),
        ("company",),
        ("makes",),
        "product",
        ("TPS Report Software",),
        "user",
    )
    sell = SolvedExample(
        "what does Acme sell",
        "what does <E> sell",
        ("Acme",),
        ("company",),
        ("sells",),
        "product",
        ("Hammock",),
        "user",
    )
    asked = [
        Question("1", "what does Globex make", ("Hammock", "Doomsday Device", "Zoom!"), topic="Globex"),
        Question("2", "what does Globex sell", ("Hammock", "Doomsday Device", "Zoom!"), topic="Globex"),
    ]
    got, tally = solve_all(company_kb, asked, voters=[make, sell])
    assert tally.solved == 2  # makes and sells reach the same three products from Globex
    assert [e.relations for e in got] == [("makes",), ("sells",)]


def test_questions_are_written_from_relation_words_in_two_styles():
    from hybridrag.agents.shots.synth import write_question

    there_and_back = ((("supplies", "in"), "company"), (("supplies", "out"), "company"))
    assert write_question("Acme", there_and_back) == (
        "which company that shares a company (supplies) with Acme",
        "which company that shares a company (supplies) with <E>",
    )
    two_hops = ((("makes", "out"), "product"), (("made_of", "out"), "material"))
    assert write_question("Acme", two_hops, style=0)[1] == "which material that the product that <E> makes is made of"
    assert write_question("Acme", two_hops, style=1)[1] == "what material is the product that <E> makes made of"
    assert write_question("Steel", ((("made_of", "in"), "product"),), style=1)[1] == "what product is made of <E>"


def test_bank_build_leaves_out_and_keeps_aside_the_outvoted(company_kb, tmp_path, monkeypatch, capsys):
    import hybridrag.agents.shots.solve as solve_mod
    from hybridrag.agents.shots.consensus import REASON
    from hybridrag.app.bank_cli import _report
    from hybridrag.evals.datasets import Question

    asked = [
        Question(str(i), q, ans, topic=topic)
        for i, (q, ans, topic) in enumerate(
            [
                ("what does Acme make", ("Hammock",), "Acme"),
                ("what does Globex make", ("Doomsday Device",), "Globex"),
                ("what does Initech make", ("TPS Report Software",), "Initech"),
            ]
        )
    ]
    got, tally = solve_mod.solve_all(company_kb, asked, consensus=False)
    assert tally.solved == 3 and not tally.dropped
    rels = [e.relations for e in got]
    # the solver's own paths, then one of them made the odd one out by its look-alikes
    monkeypatch.setattr("hybridrag.agents.shots.consensus.outliers", lambda examples, *a, **k: [len(examples) - 1])
    kept, tally = solve_mod.solve_all(company_kb, asked)
    assert [e.relations for e in kept] == rels[:2] and [e.question for e in tally.dropped] == [asked[2].question]
    assert tally.solved == 2 and tally.skipped[REASON] == 1 and REASON in tally.line()
    _report(company_kb, tmp_path / "q.txt", tally)
    out = company_kb.directory / "bank.outliers.jsonl"
    assert json.loads(out.read_text().splitlines()[0])["question"] == asked[2].question
    assert "1 outvoted examples written to" in capsys.readouterr().out
    tally.dropped = [kept[0]]  # a later `bank add`: the earlier outliers stay in the file
    _report(company_kb, tmp_path / "more.txt", tally)
    assert [json.loads(line)["question"] for line in out.read_text().splitlines()] == [
        asked[2].question,
        kept[0].question,
    ]
