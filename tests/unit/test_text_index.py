"""Dense (exact and HNSW) and BM25 indexes on small hand-made data."""

import numpy as np

from kb import text_index
from kb.text_index import BM25Index, DenseIndex


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
