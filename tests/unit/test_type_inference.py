"""Entity types inferred from relation signatures when a KB's triples come without them."""

from hybridrag.kb.type_inference import infer_type_map, type_name

TRIPLES = [
    ("Big", "directed_by", "Penny Marshall"),
    ("Big", "written_by", "Gary Ross"),
    ("Big", "has_genre", "Comedy"),
    ("Big", "starred_actors", "Tom Hanks"),
    ("Big", "release_year", "1988"),
    ("Awakenings", "directed_by", "Penny Marshall"),
    ("Awakenings", "written_by", "Steven Zaillian"),
    ("Awakenings", "has_genre", "Drama"),
    ("Awakenings", "starred_actors", "Robin Williams"),
    ("Seabiscuit", "directed_by", "Gary Ross"),
    ("Seabiscuit", "written_by", "Gary Ross"),
    ("Seabiscuit", "has_genre", "Drama"),
    ("Seabiscuit", "release_year", "2003"),
]


def test_relation_names_give_type_names():
    assert [
        type_name(r)
        for r in ("directed_by", "written_by", "has_genre", "in_language", "starred_actors", "release_year", "has_tags")
    ] == ["director", "writer", "genre", "language", "actor", "release_year", "tag"]


def test_heads_shared_by_every_relation_are_one_type_and_tails_keep_their_own():
    types = infer_type_map(TRIPLES)
    assert {h for h, _ in types.values()} == {"item"}  # every relation starts from the films
    # Gary Ross directs and writes: one type for both slots (a KB gives an entity one type)
    assert types["directed_by"][1] == types["written_by"][1] == "person"
    assert types["starred_actors"][1] == "actor"  # no actor directs or writes here
    assert types["has_genre"][1] == "genre" and types["release_year"][1] == "release_year"


def test_slots_holding_the_same_entities_merge():
    triples = [
        ("a", "parent_of", "b"),
        ("b", "parent_of", "c"),
        ("a", "child_of", "x"),
        ("b", "child_of", "a"),
        ("c", "child_of", "b"),
    ]
    types = infer_type_map(triples)
    assert types["parent_of"][0] == types["parent_of"][1] == types["child_of"][0]


def test_an_untyped_ingest_records_the_inferred_types(tmp_path):
    import json

    from hybridrag.kb.base import KnowledgeBase
    from hybridrag.kb.ingest import ingest

    triples = tmp_path / "kb.txt"
    triples.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES), encoding="utf-8")
    report = ingest(tmp_path / "kb", triples=[triples], progress=False)
    assert any("inferred" in w for w in report.warnings)
    kb = KnowledgeBase(tmp_path / "kb")
    manifest = json.loads((kb.build_dir / "manifest.json").read_text())
    assert manifest["inferred_types"]["directed_by"] == ["item", "person"]
    assert kb.graph.lookup("Penny Marshall")[0].type == "person"
    assert kb.graph.lookup("Big")[0].type == "item"


def test_the_stand_in_names_types_as_the_kb_schema_does():
    from hybridrag.evals.datasets import Question
    from hybridrag.evals.oracle.gold import record_for
    from hybridrag.kb.model import RelationType

    q = Question(
        "q1",
        "who directed the films Tom Hanks starred in",
        ("Penny Marshall",),
        qtype="actor_to_movie_to_director",
        topic="Tom Hanks",
    )
    schema = {
        "starred_actors": RelationType("starred_actors", ["item"], ["person"]),
        "directed_by": RelationType("directed_by", ["item"], ["person"]),
    }
    assert record_for(q, relation_types=schema).types == ("person", "item", "person")
    assert record_for(q).types == ("person", "movie", "person")  # no schema: MetaQA's own names
