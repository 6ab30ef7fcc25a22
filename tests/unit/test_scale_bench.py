"""The scale benchmark's synthetic KBs: renamed, disconnected copies, and replicated vectors."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.scale.ingest_stages import replicated_vectors, sigma_for
from benchmarks.scale.synth import copy_name, original_name, random_copies, write_synthetic

TWENTY = [
    ("Big", "directed_by", "Penny Marshall"),
    ("Big", "starred_actors", "Tom Hanks"),
    ("Big", "release_year", "1988"),
    ("Big", "has_genre", "Comedy"),
    ("A League of Their Own", "directed_by", "Penny Marshall"),
    ("A League of Their Own", "starred_actors", "Tom Hanks"),
    ("A League of Their Own", "starred_actors", "Geena Davis"),
    ("A League of Their Own", "release_year", "1992"),
    ("Apollo 13", "directed_by", "Ron Howard"),
    ("Apollo 13", "starred_actors", "Tom Hanks"),
    ("Apollo 13", "starred_actors", "Kevin Bacon"),
    ("Apollo 13", "release_year", "1995"),
    ("Splash", "directed_by", "Ron Howard"),
    ("Splash", "starred_actors", "Tom Hanks"),
    ("Splash", "starred_actors", "Daryl Hannah"),
    ("Splash", "release_year", "1984"),
    ("Cocoon", "directed_by", "Ron Howard"),
    ("Cocoon", "has_genre", "Comedy"),
    ("Cocoon", "release_year", "1985"),
    ("$9.99", "written_by", "Etgar Keret"),
]


@pytest.fixture
def kb_txt(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TWENTY), encoding="utf-8")
    return path


def _read(path):
    return [tuple(line.split("|")) for line in path.read_text(encoding="utf-8").splitlines()]


def test_factor_two_doubles_counts_and_renames_copy_two(kb_txt, tmp_path):
    counts = write_synthetic(kb_txt, tmp_path / "x2" / "kb.txt", 2)
    rows = _read(tmp_path / "x2" / "kb.txt")
    names = {n for h, _, t in TWENTY for n in (h, t)}
    assert counts == {
        "factor": 2,
        "triples": 40,
        "entities": 2 * len(names),
        "source_triples": 20,
        "source_entities": len(names),
    }
    assert len(rows) == 40
    copy1, copy2 = rows[:20], rows[20:]
    assert copy1 == TWENTY  # copy 1 is the KB itself
    assert [r for _, r, _ in copy2] == [r for _, r, _ in TWENTY]  # relations unchanged
    copy2_names = {n for h, _, t in copy2 for n in (h, t)}
    assert copy2_names == {f"{n} #2" for n in names}
    assert not copy2_names & names  # no original name leaks into copy 2: the copies are disconnected
    assert len({n for h, _, t in rows for n in (h, t)}) == counts["entities"]


def test_copy_names_round_trip_and_bad_input(kb_txt, tmp_path):
    assert copy_name("Big", 1) == "Big" and copy_name("Big", 7) == "Big #7"
    assert original_name("Apollo 13 #12") == "Apollo 13" and original_name("Apollo 13") == "Apollo 13"
    with pytest.raises(ValueError, match="factor"):
        write_synthetic(kb_txt, tmp_path / "x0.txt", 0)
    bad = tmp_path / "bad.txt"
    bad.write_text("Big|directed_by\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.txt:1: expected head\|relation\|tail"):
        write_synthetic(bad, tmp_path / "out.txt", 2)
    bad.write_text("Big #3|directed_by|Penny Marshall\n", encoding="utf-8")
    with pytest.raises(ValueError, match="copy suffix"):
        write_synthetic(bad, tmp_path / "out.txt", 2)


def test_random_copies_are_seeded_and_in_range():
    a = random_copies(200, 4, seed=3)
    assert a == random_copies(200, 4, seed=3) and set(a) == {1, 2, 3, 4}


def test_replicated_vectors_keep_copy_one_and_hit_the_cosine():
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(50, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = {f"e{i}": i for i in range(50)}
    texts = [f"e{i}" for i in range(50)] + [f"e{i} #2" for i in range(50)]
    out = replicated_vectors(texts, rows, vecs, sigma_for(0.9, 384))
    assert np.allclose(out[:50], vecs, atol=1e-6)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    cos = np.sum(out[50:] * vecs, axis=1)
    assert abs(float(cos.mean()) - 0.9) < 0.01 and not np.allclose(out[50:], vecs)


def test_a_replicated_ingest_encodes_nothing_and_copies_the_base_vectors(tmp_path, monkeypatch):
    import hybridrag.kb.embed_chunks as chunks
    import hybridrag.kb.vector_reuse as reuse
    from benchmarks.scale.ingest_stages import base_vectors, full_ingest
    from hybridrag.kb.base import KnowledgeBase
    from hybridrag.kb.ingest import ingest

    src = tmp_path / "kb.txt"
    src.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TWENTY), encoding="utf-8")
    ingest(tmp_path / "base", [src], progress=False)  # the 1× KB: real vectors
    write_synthetic(src, tmp_path / "x2.txt", 2)

    def no_encode(*_a, **_k):
        raise AssertionError("a replicated ingest must not run the embedding model")

    import hybridrag.kb.ingest as ki

    for name in ("embed_new", "DenseIndex", "BM25Index"):  # full_ingest replaces them: put them back after
        monkeypatch.setattr(ki, name, getattr(ki, name))
    monkeypatch.setattr(chunks, "embed_in_chunks", no_encode)
    monkeypatch.setattr(reuse, "embed_in_chunks", no_encode)
    rep = full_ingest(tmp_path / "x2.txt", tmp_path / "x2", {"base": str(tmp_path / "base"), "sigma": 0.02})
    assert rep["embedding"] == "replicated" and not rep["encoded"]
    rows, vecs = base_vectors(tmp_path / "base")
    kb = KnowledgeBase(tmp_path / "x2")
    got = {d.text: i for i, d in enumerate(kb.docs) if d.kind == "entity"}
    stored = kb.dense.index.reconstruct_n(0, kb.dense.index.ntotal)
    assert np.allclose(stored[got["Tom Hanks"]], vecs[rows["Tom Hanks"]], atol=1e-6)
    assert not np.allclose(stored[got["Tom Hanks #2"]], vecs[rows["Tom Hanks"]], atol=1e-3)
