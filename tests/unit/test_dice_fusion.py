"""Dice–Sørensen and fusion arithmetic on hand-checked examples."""

import numpy as np
import pytest

from hybridrag.agents.fusion.scoring import Candidate, fuse, fuse_normalised, fuse_rrf, merge
from hybridrag.tools.dice import LabelTable, dice, text_facts, tokens, triple_score
from hybridrag.tools.text import sentences


def test_word_tokens_and_dice():
    q = tokens("Who directed Forrest Gump", "word")
    assert q == {"who", "directed", "forrest", "gump"}
    # |q ∩ {forrest, gump}| = 2 → 2*2 / (4+2) = 2/3
    assert dice(q, tokens("Forrest Gump", "word")) == pytest.approx(2 / 3)
    assert dice(q, tokens("Cast Away", "word")) == 0.0
    assert dice(frozenset(), frozenset()) == 0.0


def test_bigram_tokens_and_dice():
    assert tokens("night", "bigram") == {"ni", "ig", "gh", "ht"}
    assert tokens("a b", "bigram") == {"a", "b"}
    # night vs nacht: bigrams {ni,ig,gh,ht} vs {na,ac,ch,ht}: 1 shared → 2*1/(4+4) = 0.25
    assert dice(tokens("night", "bigram"), tokens("nacht", "bigram")) == pytest.approx(0.25)


def test_triple_score_is_mean_of_three_dice():
    q = tokens("who directed forrest gump", "word")
    s = triple_score(
        q, tokens("Forrest Gump", "word"), tokens("directed by", "word"), tokens("Robert Zemeckis", "word")
    )
    # head 2/3, relation 2*1/(4+2)=1/3, tail 0 → (2/3 + 1/3 + 0) / 3 = 1/3
    assert s == pytest.approx(1 / 3)


def test_unknown_tokenizer_is_refused():
    with pytest.raises(ValueError, match="unknown tokenizer"):
        tokens("x", "trigram")  # type: ignore[arg-type]


@pytest.mark.parametrize("tok", ["word", "bigram"])
def test_label_table_matches_scalar_dice(tok):
    labels = ["Forrest Gump", "Tom Hanks", "Cast Away", "", "gump gump"]
    table = LabelTable(labels, tok)
    q = tokens("what did tom hanks star in with gump", tok)
    got = table.scores(q, np.arange(len(labels)))
    want = [dice(q, tokens(label, tok)) for label in labels]
    assert got == pytest.approx(want)


def _c(id_, score, source):
    return Candidate(id_, "entity", id_, score, source)


def test_fuse_union_bias_dedupe_and_topk():
    vector = [_c("A", 0.9, "vector"), _c("B", 0.5, "vector"), _c("C", 0.3, "vector")]
    graph = [_c("B", 0.5, "graph"), _c("D", 0.7, "graph"), _c("A", 0.2, "graph")]
    top = fuse(vector, graph, epsilon=1e-6, k=3)
    assert [c.id for c in top] == ["A", "D", "B"]
    # A keeps its max (vector 0.9); B's tie is won by the graph copy through ε
    assert top[0].score == pytest.approx(0.9) and top[0].source == "vector"
    assert top[2].source == "graph" and top[2].score == pytest.approx(0.5 + 1e-6)
    assert top[1].score == pytest.approx(0.7 + 1e-6)


def test_fuse_with_zero_epsilon_keeps_first_seen_on_tie():
    top = fuse([_c("B", 0.5, "vector")], [_c("B", 0.5, "graph")], epsilon=0.0, k=5)
    assert len(top) == 1 and top[0].source == "vector"


def test_merge_keeps_the_higher_score_and_the_facts_of_both_copies():
    vec = Candidate("R", "entity", "Ridley Scott", 0.5, "vector")
    graph = Candidate("R", "entity", "Ridley Scott", 0.38, "graph", facts=["Alien → directed by → Ridley Scott"])
    (one,) = merge([vec, graph])
    assert (one.source, one.score) == ("vector", 0.5)
    assert one.facts == ["Alien → directed by → Ridley Scott"]
    assert one.as_evidence()["path"] == ["Alien → directed by → Ridley Scott"]


def test_fuse_normalised_scales_each_branch_by_its_best_without_named():
    vector = [_c("Q", 0.8, "vector"), _c("A", 0.6, "vector"), _c("B", 0.3, "vector")]
    graph = [_c("D", 0.4, "graph"), _c("E", 0.2, "graph")]
    top = fuse_normalised(vector, graph, epsilon=1e-6, k=None, named={"Q"})
    # A: 0.6/0.6 = 1; D: 0.4/0.4 + ε wins the tie; B: 0.5; E: 0.5 + ε; the named Q last (0.8/0.6)
    assert [c.id for c in top] == ["D", "A", "E", "B", "Q"]
    assert [round(c.score, 6) for c in top] == [1.000001, 1.0, 0.500001, 0.5, round(0.8 / 0.6, 6)]


def test_fuse_rrf_sums_reciprocal_ranks_and_ranks_named_last():
    vector = [_c("Q", 0.9, "vector"), _c("A", 0.8, "vector"), _c("B", 0.1, "vector")]
    graph = [_c("B", 0.5, "graph"), _c("C", 0.4, "graph")]
    top = fuse_rrf(vector, graph, epsilon=0.0, k=None, named={"Q"})
    # ranks without Q: vector A1 B2, graph B1 C2 → B 1/62 + 1/61, A 1/61, C 1/62
    assert [c.id for c in top] == ["B", "A", "C", "Q"]
    assert top[0].score == pytest.approx(1 / 62 + 1 / 61) and top[3].score == 0.0


def test_sentences_split_after_end_marks():
    assert sentences("Alien is a film. It was directed by Ridley Scott!  Why? ") == [
        "Alien is a film.",
        "It was directed by Ridley Scott!",
        "Why?",
    ]


def test_text_facts_score_a_sentence_like_an_answer_aware_triple():
    q = tokens("who directed Alien", "word")
    text = "Alien was directed by Ridley Scott. Sigourney Weaver starred in Alien. Alien"
    facts = text_facts(q, text, {"Alien": "Alien"}, "word")
    # {alien}: 2*1/(3+1) = 0.5; rest {was, directed, by, ridley, scott}: 2*1/(3+5) = 0.25 → 0.375
    assert facts[0] == (pytest.approx(0.375), "Alien was directed by Ridley Scott.", "Alien")
    # the bare name "Alien" says nothing more: no fact
    assert [f[1] for f in facts] == ["Alien was directed by Ridley Scott.", "Sigourney Weaver starred in Alien."]


def test_text_facts_do_not_see_a_shorter_name_inside_the_text_subject():
    q = tokens("who directed Alien", "word")
    text = "Alien 3 was directed by David Fincher. Alien 3 is tagged as alien."
    facts = text_facts(q, text, {"Alien": "Alien"}, "word", about="Alien 3")
    # only the tag "alien" is a mention; "Alien 3" is left out of the rest {is, tagged, as}
    assert [(round(s, 6), f) for s, f, _ in facts] == [(0.25, "Alien 3 is tagged as alien.")]


def test_single_query_fast_path_equals_sentence_transformers_encode():
    from hybridrag.kb.embeddings import get_embeddings

    emb = get_embeddings()
    q = "who directed Forrest Gump"
    fast = emb.encode([q])[0]
    full = emb.model.encode([q], normalize_embeddings=True)[0]
    assert np.allclose(fast, full, atol=1e-5)
