"""KB tables are read in one parse; a damaged line is named."""

import pytest

from hybridrag.kb.jsonl import read_rows
from hybridrag.kb.model import KBError


def test_rows_round_trip_with_unicode_and_blank_trailing_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '["entity", "Amélie", null, "Amélie"]\n["passage", "p1", "Amélie", "a, b] {c}"]\n\n', encoding="utf-8"
    )
    assert read_rows(path) == [["entity", "Amélie", None, "Amélie"], ["passage", "p1", "Amélie", "a, b] {c}"]]


def test_a_damaged_line_is_named(tmp_path):
    path = tmp_path / "entities.jsonl"
    path.write_text('["a", "A", "t", "A", []]\n["b", "B", "t"\n', encoding="utf-8")
    with pytest.raises(KBError, match=r"entities.jsonl: line 2 is not valid JSON"):
        read_rows(path)


def test_an_empty_table_has_no_rows(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text("", encoding="utf-8")
    assert read_rows(path) == []
