"""evals/bank_consensus.py: a bank file's typed, solved examples counted by whether their path is gold."""

from __future__ import annotations

import json

from benchmarks.quality.bank_consensus import tally


def test_tally_counts_gold_and_other_paths_and_skips_schema_and_untyped(tmp_path):
    rows = [
        {"question": "who directed Big", "relations": ["directed_by"], "source": "run"},
        {"question": "who wrote Big", "relations": ["directed_by"], "source": "run"},
        {"question": "who directed Heat", "relations": ["written_by"], "source": "schema"},
        {"question": "an untyped question", "relations": ["written_by"], "source": "user"},
    ]
    path = tmp_path / "bank.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    types = {
        "who directed Big": "movie_to_director",
        "who wrote Big": "movie_to_writer",
        "who directed Heat": "movie_to_director",
    }
    assert tally(path, types) == {"right": 1, "wrong": 1}
    assert tally(tmp_path / "missing.jsonl", types) == {}
