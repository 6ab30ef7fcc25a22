"""The benchmark report: rows for every method, published numbers kept apart, honest verdicts."""

import argparse

import pytest

from benchmarks.__main__ import main as benchmarks_main
from benchmarks.quality import report
from benchmarks.quality.published import PUBLISHED, published_cell
from hybridrag.evals.summary import summarise


def _summary(hits: list[bool], answers: list[str], llm_calls: int = 0, command: str = "cmd") -> dict:
    """A real summary of hand-made records: question i is answered 'gold' when hits[i]."""
    records = []
    for i, (hit, answer) in enumerate(zip(hits, answers, strict=True)):
        relevant = [["gold"]] if hit else [[]]
        records.append(
            {
                "id": f"q{i}",
                "qtype": "t",
                "gold": {"keys": ["gold"], "answers": ["gold"]},
                "relevant": relevant,
                "answer": answer,
                "reachable": ["gold"],
                "seconds": 0.5,
                "usage": {
                    "llm_calls": llm_calls,
                    "input_tokens": 10 * llm_calls,
                    "output_tokens": llm_calls,
                    "fallbacks": llm_calls // 3,
                },
            }
        )
    return {**summarise(records), "command": command}


def _args(**kw) -> argparse.Namespace:
    return argparse.Namespace(limit=kw.get("limit", 4), llm_limit=kw.get("llm_limit", 2), llm="local:smollm2")


def test_every_method_has_a_row_and_a_published_cell_naming_dataset_and_model():
    labels = [label for label, *_ in report.METHODS]
    assert {"fusion (hybrid)", "vector-only", "graph-only", "BM25", "hybgrag", "mor", "hydrarag", "ssrag"} <= set(
        labels
    )
    for label in labels:
        entry = PUBLISHED[label]
        cell = published_cell(label)
        assert entry.dataset in cell and entry.model in cell
    assert published_cell("no such method") == "–"


def test_rows_show_metrics_usage_and_published_numbers_separately():
    cells = {
        "fusion (hybrid)": _summary([True, True, False, True], ["gold", "x", "x", "x"]),
        "graph-only": _summary([True, False, False, False], ["gold", "x", "x", "x"]),
        "hybgrag": _summary([True, False], ["gold", "nope"], llm_calls=3),
    }
    text = report.render(
        {"metaqa-hybrid-50": cells},
        {"date": "d", "commit": "c", "machine": {"cores": 2, "cpu": "cpu"}, "llm": "local:smollm2"},
        _args(),
    )
    rows = {
        line.split(" | ")[0].lstrip("| "): line.split(" | ")
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith("| method")
    }
    header = next(line for line in text.splitlines() if line.startswith("| method")).split(" | ")
    col = {name.strip("| "): i for i, name in enumerate(header)}
    hyb = rows["hybgrag"]
    assert hyb[col["Hit@1"]] == "0.500" and hyb[col["answer EM"]] == "0.500"
    assert hyb[col["fallbacks"]] == "1.0"
    assert hyb[col["LLM calls"]] == "3.0" and hyb[col["tokens"]] == "33" and hyb[col["n"]] == "2"
    assert "STaRK-MAG test; Claude 3 Sonnet" in hyb[col["*published* (their dataset; model)"]]
    assert rows["fusion (hybrid)"][col["R@10"]] == "0.750"
    assert "`local:smollm2`" in text and "N = 2" in text


def test_verdict_compares_fusion_with_its_baselines_only_and_says_where_it_loses():
    cells = {
        "fusion (hybrid)": _summary([True, False], ["x", "x"]),
        "vector-only": _summary([False, False], ["x", "x"]),
        "graph-only": _summary([True, True], ["x", "x"]),
        "hybgrag": _summary([True, True], ["x", "x"], llm_calls=1),
    }
    lines = report._verdict(cells)
    assert any(line.startswith("- Fusion beats vector-only on R@10") for line in lines)
    assert any(line.startswith("- Fusion does NOT beat graph-only on MRR") for line in lines)
    assert not any("hybgrag" in line for line in lines)


def test_failed_cell_is_reported_not_raised():
    row = report._row("mor", {"failed": "KBError: boom", "command": "hybridrag eval --method mor"})
    assert "failed: KBError: boom" in row and "`hybridrag eval --method mor`" in row
    header = report.render(
        {"d": {}}, {"date": "d", "commit": "c", "machine": {"cores": 2, "cpu": "c"}, "llm": "x"}, _args()
    ).splitlines()
    header_row = next(line for line in header if line.startswith("| method"))
    assert row.count(" | ") == header_row.count(" | ")  # same number of cells as the header


def test_unknown_method_label_is_a_clear_error():
    with pytest.raises(SystemExit, match=r"unknown method label\(s\) \['fusion'\]"):
        benchmarks_main(["quality", "--methods", "fusion", "--datasets", "metaqa-1hop"])


def test_oracle_rows_are_labelled_as_ceilings():
    from benchmarks.quality.report import row_label

    assert row_label("hybgrag", "oracle") == "hybgrag [oracle: perfect-LLM ceiling]"
    assert row_label("hybgrag", "oracle:p=0.3") == "hybgrag [oracle: perfect-LLM ceiling]"
    assert row_label("hybgrag", "local:smollm2") == "hybgrag"
    assert row_label("fusion (hybrid)", None) == "fusion (hybrid)"
