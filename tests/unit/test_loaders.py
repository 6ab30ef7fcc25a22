"""KB input parsers: formats, and malformed input reported with its line number."""

import json

import pytest

from kb.loaders import read_entities, read_passages, read_triples, read_type_map
from kb.model import MalformedInputError, Triple


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_pipe_tsv_csv_jsonl_triples(tmp_path):
    want = [Triple("Kismet", "directed_by", "William Dieterle")]
    assert list(read_triples(_write(tmp_path, "kb.txt", "Kismet|directed_by|William Dieterle\n\n"))) == want
    assert list(read_triples(_write(tmp_path, "kb.tsv", "Kismet\tdirected_by\tWilliam Dieterle\n"))) == want
    csv_text = "head,relation,tail\nKismet,directed_by,William Dieterle\n"
    assert list(read_triples(_write(tmp_path, "kb.csv", csv_text))) == want
    row = json.dumps({"head": "Kismet", "relation": "directed_by", "tail": "William Dieterle"})
    assert list(read_triples(_write(tmp_path, "kb.jsonl", row + "\n"))) == want


@pytest.mark.parametrize(
    ("name", "text", "line", "problem"),
    [
        ("a.txt", "A|r|B\nA|r\n", 2, "expected 3 fields"),
        ("b.txt", "A|r|B\nA|r|B|C\n", 2, "expected 3 fields"),
        ("c.txt", "A|r|B\n\nA||B\n", 3, "empty head"),
        ("d.tsv", "A\tr\tB\nA r B\n", 2, "expected 3 fields"),
        ("e.jsonl", '{"head": "A", "relation": "r", "tail": "B"}\n{"head": "A",\n', 2, "invalid JSON"),
        ("f.jsonl", "[1, 2, 3]\n", 1, "expected a JSON object"),
    ],
)
def test_malformed_triples_name_file_and_line(tmp_path, name, text, line, problem):
    path = _write(tmp_path, name, text)
    with pytest.raises(MalformedInputError) as err:
        list(read_triples(path))
    assert err.value.line_no == line
    assert f"{name}:{line}:" in str(err.value) and problem in str(err.value)


def test_entities_and_passages(tmp_path):
    ents = _write(tmp_path, "e.jsonl", json.dumps({"id": "Q1", "name": "Kismet", "type": "movie",
                                                   "aliases": ["Kismet (1944)"]}) + "\n")
    e = next(read_entities(ents))
    assert (e.id, e.name, e.type, e.aliases) == ("Q1", "Kismet", "movie", ("Kismet (1944)",))
    pas = _write(tmp_path, "p.jsonl", json.dumps({"text": "Kismet is a 1944 film.", "entity_id": "Q1"}) + "\n")
    p = next(read_passages(pas))
    assert (p.id, p.entity_id) == ("p1", "Q1")


def test_malformed_entities_passages_and_type_map(tmp_path):
    with pytest.raises(MalformedInputError, match=r"e.jsonl:2: entity needs"):
        list(read_entities(_write(tmp_path, "e.jsonl", '{"id": "a"}\n{"type": "movie"}\n')))
    with pytest.raises(MalformedInputError, match=r"e2.jsonl:1: 'aliases' must be a list"):
        list(read_entities(_write(tmp_path, "e2.jsonl", '{"id": "a", "aliases": "x"}\n')))
    with pytest.raises(MalformedInputError, match=r"p.jsonl:1: passage needs a non-empty 'text'"):
        list(read_passages(_write(tmp_path, "p.jsonl", '{"text": "  "}\n')))
    with pytest.raises(MalformedInputError, match="needs \\[head_type, tail_type\\]"):
        read_type_map(_write(tmp_path, "t.json", '{"directed_by": "movie"}'))


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="input file not found"):
        list(read_triples(tmp_path / "nope.txt"))
