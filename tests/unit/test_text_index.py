"""Dense (exact and HNSW) and BM25 indexes on small hand-made data."""

import numpy as np
import pytest

from hybridrag.kb import text_index
from hybridrag.kb.text_index import BM25Index, DenseIndex


def _unit(rows):
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_exact_and_hnsw_agree_and_survive_save_load(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    vecs = _unit(rng.normal(size=(300, 16)))
    exact = DenseIndex.build(vecs)
    monkeypatch.setattr(text_index, "HNSW_THRESHOLD", 100)
    hnsw = DenseIndex.build(vecs)
    assert hasattr(hnsw.index, "hnsw") and not hasattr(exact.index, "hnsw")
    hnsw.save(tmp_path / "d.faiss")
    loaded = DenseIndex.load(tmp_path / "d.faiss")
    ids_e, s_e = exact.search(vecs[7], 5)
    ids_h, s_h = loaded.search(vecs[7], 5)
    assert ids_e[0] == ids_h[0] == 7 and np.isclose(s_e[0], 1.0)
    assert len(set(ids_e) & set(ids_h)) >= 4


def test_bm25_prefers_rare_matching_terms(tmp_path):
    docs = ["Tom Hanks starred in Big", "Big is a comedy", "Forrest Gump stars Tom Hanks", "a comedy"]
    idx = BM25Index.build(docs)
    ids, scores = idx.search("Forrest Gump", 3)
    assert list(ids) == [2] and scores[0] > 0
    idx.save(tmp_path)
    ids2, _ = BM25Index.load(tmp_path).search("tom hanks big", 4)
    assert ids2[0] == 0 and set(ids2) == {0, 1, 2}
    assert len(idx.search("unknownword", 3)[0]) == 0


def test_ef_search_grows_with_the_square_root_of_the_rows():
    from hybridrag.kb.text_index import HNSW_EF_MAX, HNSW_EF_SEARCH, ef_search_for

    assert ef_search_for(1_000) == HNSW_EF_SEARCH  # never below the base value
    assert ef_search_for(42_778) == 133
    assert ef_search_for(171_112) == 265  # 4x MetaQA
    assert ef_search_for(684_448) == 530  # 16x MetaQA
    assert ef_search_for(100_000_000) == HNSW_EF_MAX
    assert ef_search_for(1_000, k=500) == 500  # at least k
    with pytest.raises(ValueError, match="non-negative"):
        ef_search_for(-1)


def test_hnsw_search_uses_the_rule_for_its_row_count(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    vecs = _unit(rng.normal(size=(300, 8)))
    monkeypatch.setattr(text_index, "HNSW_THRESHOLD", 100)
    monkeypatch.setattr(text_index, "HNSW_EF_ROWS", 30)  # 300 rows = 10x the base: ceil(128 * sqrt(10))
    built = DenseIndex.build(vecs)
    assert built.ef_search == built.index.hnsw.efSearch == 405
    built.save(tmp_path / "d.faiss")
    loaded = DenseIndex.load(tmp_path / "d.faiss")
    assert loaded.ef_search == loaded.index.hnsw.efSearch == 405  # computed at load, not stored
    loaded.search(vecs[0], 3)
    assert loaded.index.hnsw.efSearch == 405
    assert DenseIndex.build(vecs[:50]).ef_search == 0  # exact search below the threshold
