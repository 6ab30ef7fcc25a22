"""KB input parsers: formats, and malformed input reported with its line number."""

import json

import pytest

from hybridrag.kb.loaders import read_entities, read_passages, read_triples, read_type_map
from hybridrag.kb.model import MalformedInputError, Triple


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
    ents = _write(
        tmp_path,
        "e.jsonl",
        json.dumps({"id": "Q1", "name": "Kismet", "type": "movie", "aliases": ["Kismet (1944)"]}) + "\n",
    )
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


def _error_line(err: str) -> str:
    """The CLI's one error line (progress bars may precede it; no traceback may)."""
    assert "Traceback" not in err
    lines = [x for x in err.replace("\r", "\n").splitlines() if x.startswith("error: ")]
    assert len(lines) == 1 and err.rstrip("\n").endswith(lines[0])
    return lines[0]


def test_a_directory_given_as_an_input_file_is_a_one_line_error(tmp_path, capsys):
    from hybridrag.app.cli import main

    (tmp_path / "dir").mkdir()
    assert main(["ingest", "--kb", str(tmp_path / "kb"), "--triples", str(tmp_path / "dir")]) == 2
    last = _error_line(capsys.readouterr().err)
    assert f"input {tmp_path / 'dir'} is a directory, not a file" in last


def test_type_map_must_be_an_object_of_pairs_with_the_line_of_a_bad_one(tmp_path):
    with pytest.raises(MalformedInputError, match=r"t.json:1: expected a JSON object .*not a JSON list"):
        read_type_map(_write(tmp_path, "t.json", '[["directed_by", "movie", "person"]]'))
    text = '{\n  "directed_by": ["movie", "person"],\n  "starred_actors": ["movie"]\n}'
    with pytest.raises(MalformedInputError, match=r"t2.json:3: relation 'starred_actors' needs"):
        read_type_map(_write(tmp_path, "t2.json", text))


@pytest.mark.parametrize(
    ("name", "good", "reader"),
    [
        ("a.txt", "A|r|B\n", read_triples),
        ("b.tsv", "A\tr\tB\n", read_triples),
        ("c.csv", "A,r,B\n", read_triples),
        ("d.jsonl", '{"head": "A", "relation": "r", "tail": "B"}\n', read_triples),
        ("e.jsonl", '{"id": "A"}\n', read_entities),
        ("p.jsonl", '{"text": "A passage."}\n', read_passages),
    ],
)
def test_bad_utf8_names_the_file_and_line(tmp_path, name, good, reader):
    path = tmp_path / name
    path.write_bytes(good.encode() * 2 + good.replace("A", "Caf\xe9").encode("latin-1"))
    with pytest.raises(MalformedInputError, match=rf"{name}:3: invalid UTF-8 \(byte 0xe9"):
        list(reader(path))


def test_bad_utf8_in_a_type_map_names_the_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes('{\n "a": ["movie", "person"],\n "b": ["caf\xe9", "x"]\n}'.encode("latin-1"))
    with pytest.raises(MalformedInputError, match=r"t.json:3: invalid UTF-8"):
        read_type_map(path)


@pytest.mark.parametrize(
    ("reader", "row", "field"),
    [
        (read_passages, {"text": "Kismet is a film.", "entity_id": ["Q1", "Q2"]}, "'entity_id'"),
        (read_passages, {"id": {"x": 1}, "text": "Kismet is a film."}, "'id'"),
        (read_entities, {"id": ["Q1"], "name": "Kismet"}, "'id'"),
        (read_entities, {"id": "Q1", "text": ["Kismet"]}, "'text'"),
        (read_triples, {"head": ["Kismet"], "relation": "r", "tail": "B"}, "head, relation and tail"),
    ],
)
def test_ids_that_are_lists_or_objects_name_the_file_and_line(tmp_path, reader, row, field):
    path = _write(
        tmp_path,
        "x.jsonl",
        json.dumps({"text": "ok", "id": "a", "head": "A", "relation": "r", "tail": "B"})
        + "\n"
        + json.dumps(row)
        + "\n",
    )
    with pytest.raises(MalformedInputError, match=rf"x.jsonl:2: {field} must be a string, not a JSON"):
        list(reader(path))


def test_a_passage_entity_id_list_fails_ingest_with_file_and_line(tmp_path, capsys):
    from hybridrag.app.cli import main

    triples = _write(tmp_path, "t.txt", "A|r|B\n")
    pas = _write(tmp_path, "p.jsonl", json.dumps({"text": "About A.", "entity_id": ["A"]}) + "\n")
    assert main(["ingest", "--kb", str(tmp_path / "kb"), "--triples", str(triples), "--passages", str(pas)]) == 2
    last = _error_line(capsys.readouterr().err)
    assert "p.jsonl:1: 'entity_id' must be a string, not a JSON list" in last


def test_duplicate_ids_are_warned_and_counted_in_the_manifest(tmp_path, monkeypatch):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from hybridrag.kb.base import KnowledgeBase
    from hybridrag.kb.ingest import ingest

    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: DeterministicFakeEmbedding(size=8))
    heat = _write(tmp_path, "t.txt", "Heat|directed_by|Michael Mann\nHeat|release_year|1995\n" * 2)
    ents = tmp_path / "e.jsonl"
    ents.write_text('{"id": "Heat", "type": "movie"}\n{"id": "Heat", "type": "film"}\n', encoding="utf-8")
    pas = tmp_path / "p.jsonl"
    pas.write_text(
        '{"id": "p1", "text": "a"}\n{"id": "p1", "text": "b"}\n{"id": "p1", "text": "c"}\n', encoding="utf-8"
    )
    report = ingest(tmp_path / "kb", [heat], entities=ents, passages=pas, progress=False)
    warnings = json.loads((tmp_path / "kb" / "manifest.json").read_text())["warnings"]
    assert warnings == report.warnings and len(warnings) == 3
    assert "e.jsonl: 1 entity rows repeat an id" in warnings[0] and "'Heat'" in warnings[0]
    assert "2 duplicate triples" in warnings[1] and "p.jsonl: 2 passage rows repeat" in warnings[2]
    kb = KnowledgeBase(tmp_path / "kb")
    assert kb.graph.get("Heat").type == "movie" and [d.text for d in kb.docs if d.kind == "passage"] == ["a"]
