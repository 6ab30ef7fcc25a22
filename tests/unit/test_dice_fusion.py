"""Dice–Sørensen and fusion arithmetic on hand-checked examples."""

import numpy as np
import pytest

from agents.fusion_scoring import Candidate, fuse
from tools.dice import LabelTable, dice, tokens, triple_score


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
    s = triple_score(q, tokens("Forrest Gump", "word"), tokens("directed by", "word"),
                     tokens("Robert Zemeckis", "word"))
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


def test_single_query_fast_path_equals_sentence_transformers_encode():
    from kb.embeddings import get_embeddings

    emb = get_embeddings()
    q = "who directed Forrest Gump"
    fast = emb.encode([q])[0]
    full = emb.model.encode([q], normalize_embeddings=True)[0]
    assert np.allclose(fast, full, atol=1e-5)
