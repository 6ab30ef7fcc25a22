"""The fusion benchmark reports: one section each in docs/benchmarks_fusion.md, tune/held-out split, verdicts."""

import pytest

from benchmarks.quality.fusion_ranking import BASELINES, GOAL, part_of, verdict
from hybridrag.evals.markdown import replace_section, write_section

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


def test_render_is_one_section_with_the_command_the_split_and_every_table():
    import argparse

    from benchmarks.quality.fusion_ranking import COLUMNS, HEADING, HELD, ONE_HOP, TUNE, render

    def cell(v):
        return {
            "metrics": {k: v for k, _ in COLUMNS},
            "n": 7,
            "command": "hybridrag eval ...",
            "usage": {"latency_seconds": {"total": {"p50": 0.05}}},
            "records_written": "2026-01-01 00:00 UTC",
        }

    tuned: dict = {}
    held: dict = {}
    for d, configs in TUNE:
        tuned.setdefault(d, {}).update({label: cell(0.5) for label in configs})
    for d, configs in HELD:
        held.setdefault(d, {}).update({label: cell(0.9 if label == "fusion default" else 0.4) for label in configs})
    args = argparse.Namespace(limit=7, tune_limit=3, workers=1, resume=False)
    info = {
        "date": "2026-01-01 00:10 UTC",
        "commit": "abc1234",
        "minutes": 12.5,
        "machine": {"cores": 2, "cpu": "test cpu"},
    }
    text = render(tuned, held, args, info)
    assert text.startswith(HEADING + "\n") and sum(line.startswith("## ") for line in text.splitlines()) == 1
    assert "`python -m benchmarks fusion-ranking --limit 7 --tune-limit 3 --workers 1`" in text
    assert "took 12.5 min" in text and "`abc1234`" in text
    assert all(f"#### {d}\n" in text for d, _ in HELD)
    assert text.count("beats it on all five.") == 3 * len(ONE_HOP)
