"""The module benchmark on a tiny KB: every method's modules timed with gold decisions, results
recorded and compared; the KB vector tables serve the vectors the model gives."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.speed.modules import compare, run_condition, table
from benchmarks.speed.modules_methods import METHODS
from hybridrag.agents import vector_table
from hybridrag.evals.oracle.gold import GoldRecord
from hybridrag.kb.base import open_kb
from hybridrag.kb.embeddings import embed_matrix

ONE_HOP = GoldRecord(
    "q1", "who directed Big", "Big", ("movie", "director"), ("directed_by",), ("Penny Marshall",), ("kg", "docs")
)
TWO_HOP = GoldRecord(
    "q2",
    "who directed the films starring Kevin Bacon",
    "Kevin Bacon",
    ("actor", "movie", "director"),
    ("starred_actors", "directed_by"),
    ("Ron Howard",),
    ("kg", "docs"),
)


@pytest.fixture()
def kb(tiny_kb, tmp_path, monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_CACHE", str(tmp_path))  # vector tables go to the test's folder
    return open_kb(tiny_kb)


def test_every_method_times_its_modules_with_gold_decisions(kb):
    runs = run_condition({"tiny": (kb, [ONE_HOP, TWO_HOP])}, list(METHODS), [ONE_HOP], {"tiny": [ONE_HOP, TWO_HOP]})
    cells = runs["cells"]
    assert set(cells) == {f"{m}|tiny" for m in METHODS}
    assert list(cells["hybgrag|tiny"]["seconds"]) == ["text", "hybrid"]
    assert list(cells["mor|tiny"]["seconds"]) == ["traversal", "rerank"]
    assert list(cells["hydrarag|tiny"]["seconds"]) == ["explore_kg", "explore_docs", "prune"]
    assert list(cells["ssrag|tiny"]["seconds"]) == ["vector", "graph", "rerank", "dedup"]
    for cell in cells.values():
        assert cell["questions"] == ["q1", "q2"]
        for module, secs in cell["seconds"].items():
            assert len(secs) == 2 and all(s > 0 for s in secs), module
            assert set(cell["results"][module]) == {"q1", "q2"}
    # the gold decisions reach the answers: the relation path from the topic entity
    assert cells["hybgrag|tiny"]["results"]["hybrid"]["q1"][0] == "Penny Marshall"
    assert cells["hybgrag|tiny"]["results"]["hybrid"]["q2"][0] == "Ron Howard"
    assert "Penny Marshall" in cells["mor|tiny"]["results"]["rerank"]["q1"][:3]
    assert any("Penny Marshall" in t for t in cells["hydrarag|tiny"]["results"]["explore_kg"]["q1"])
    assert cells["ssrag|tiny"]["results"]["graph"]["q1"][0][0] == "Big"


def test_the_table_marks_the_goal_and_compare_finds_a_changed_result():
    cell = {
        "questions": ["a", "b"],
        "seconds": {"graph": [0.05, 0.07], "rerank": [0.2, 0.3]},
        "results": {"graph": {"a": ["x", "y"], "b": ["z"]}, "rerank": {"a": ["x"], "b": ["z"]}},
    }
    report = {
        "datasets": ["d"],
        "conditions": {"as-is": {"cells": {"ssrag|d": cell}, "load_start": "1.0 1.0 1.0", "load_end": "1.2 1.0 1.0"}},
    }
    text = table(report)
    assert "| ssrag | graph | 60 / 69 | yes |" in text
    assert "| ssrag | rerank | **250 / 295** | no |" in text
    assert "load 1.0 1.0 1.0 → 1.2 1.0 1.0" in text
    assert compare(report, report) == []
    changed = {
        "datasets": ["d"],
        "conditions": {
            "as-is": {
                "cells": {"ssrag|d": {**cell, "results": {**cell["results"], "graph": {"a": ["y", "x"], "b": ["z"]}}}}
            }
        },
    }
    assert compare(report, changed) == ["as-is ssrag|d graph a"]


def test_a_vector_table_holds_the_models_vectors_and_only_its_texts(kb):
    texts = ["was directed by", "starred in"]
    assert vector_table.lookup(kb, "test-table", texts) == {}  # not built: nothing, the caller encodes
    vector_table.build(kb, "test-table", texts)
    found = vector_table.lookup(kb, "test-table", [*texts, "not in the table"])
    assert set(found) == set(texts)
    for t in texts:
        assert np.allclose(found[t], embed_matrix(kb.embeddings, [t])[0], atol=1e-5)
    with pytest.raises(ValueError, match="vector table name"):
        vector_table.table_path(kb, "../escape")


def test_the_methods_read_their_tables_before_encoding(kb):
    from hybridrag.agents.hydrarag import pruning
    from hybridrag.agents.ssrag import vectors

    sentence, rest = "Zork Quux was shot on the moon", "was shot on the moon zq"
    marker = np.zeros((1, kb.dense.index.d), dtype=np.float32)
    marker[0, 0] = 1.0  # no encoder gives this vector: whoever returns it read the table
    for name, text in ((pruning.SENTENCE_TABLE, sentence), (vectors.FACT_TABLE, rest)):
        path = vector_table.table_path(kb, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, texts=np.asarray([text], dtype=str), vectors=marker)
        vector_table._loaded.pop(path, None)
    assert np.array_equal(pruning.embed_texts(kb, [sentence])[0], marker[0])
    assert np.array_equal(vectors.vectors(kb, [rest])[0], marker[0])
    # a sentence's parts kept with the table are used as they are (no mention search)
    vector_table.save_json(kb, vectors.FACT_PARTS, {sentence: [["Big"], rest]})
    assert vectors.fact_parts(kb, sentence, None) == (["Big"], rest)
