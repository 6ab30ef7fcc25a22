"""The fusion benchmark reports: one section each in docs/benchmarks_fusion.md, tune/held-out split, verdicts."""

import pytest

from evals.fusion_docs import replace_section, write_section
from evals.fusion_ranking import BASELINES, GOAL, part_of, verdict

SPEED = "## Fusion on the full MetaQA KB\n\nspeed v1\n"
RANKING = "## Fusion's ranking: scoring choices on MetaQA dev\n\n### Held-out\n\nranking v1\n"


def test_each_command_rewrites_only_its_own_section(tmp_path):
    doc = tmp_path / "benchmarks_fusion.md"
    write_section(doc, SPEED)
    write_section(doc, RANKING)
    write_section(doc, SPEED.replace("v1", "v2"))
    text = doc.read_text()
    assert "speed v2" in text and "speed v1" not in text
    assert "### Held-out\n\nranking v1" in text  # a '### ' line does not end the section
    write_section(doc, RANKING.replace("v1", "v2"))
    assert doc.read_text() == SPEED.replace("v1", "v2") + "\n" + RANKING.replace("v1", "v2")


def test_a_section_needs_a_level_two_heading():
    with pytest.raises(ValueError, match="'## ' heading"):
        replace_section("", "# title\n")


def test_tune_and_held_out_parts_split_the_ids_and_are_stable():
    ids = [f"metaqa-1hop:{i}" for i in range(2000)]
    parts = [part_of(i) for i in ids]
    assert set(parts) == {"tune", "heldout"}
    assert 0.45 < parts.count("tune") / len(ids) < 0.55
    assert parts == [part_of(i) for i in ids]


def _cell(value: float) -> dict:
    return {"metrics": dict.fromkeys(GOAL, value)}


def test_verdict_names_each_metric_where_the_default_is_not_ahead():
    cells = {"fusion default": _cell(0.5), **{b: _cell(0.4) for b in BASELINES}}
    assert all(line.endswith("beats it on all five.") for line in verdict(cells, "hybrid-50"))
    cells["graph-only"] = {"metrics": {**_cell(0.4)["metrics"], "hit@1": 0.5}}
    lines = verdict(cells, "hybrid-50")
    assert lines[-1] == "- hybrid-50: default vs graph-only: NOT ahead on Hit@1 0.500 vs 0.500."
