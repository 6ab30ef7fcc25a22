"""What a person reads: the answer first, numbered items with their own evidence, one line each (issue 28 item 5)."""

from __future__ import annotations

from hybridrag.agents.hybgrag.report import evidence_of as hybgrag_evidence
from hybridrag.app.cli import main
from hybridrag.app.display import answer_view, evidence_of, one_line, render_text

# HybGRAG's evidence: each reference's text, then each of its paths (not parallel to ``ranked``)
REFS = [
    {"id": "Penny Marshall", "name": "Penny Marshall", "score": 0.41, "text": "Penny Marshall directed Big.",
     "paths": ["Big → directed_by → Penny Marshall"], "triples": [[["Big", "directed_by", "Penny Marshall"]]]},
    {"id": "Gary Ross", "name": "Gary Ross", "score": 0.16, "text": "Gary Ross wrote\n\nBig.",
     "paths": ["Big → written_by → Gary Ross"], "triples": [[["Big", "written_by", "Gary Ross"]]]},
    {"id": "Anne Spielberg", "name": "Anne Spielberg", "score": 0.15, "text": "Anne Spielberg co-wrote Big.",
     "paths": ["Big → written_by → Anne Spielberg"], "triples": [[["Big", "written_by", "Anne Spielberg"]]]},
]  # fmt: skip


def _hybgrag_output() -> dict:
    ranked = [{k: r[k] for k in ("id", "name", "score")} | {"kind": "entity", "source": "kg"} for r in REFS]
    return {"answer": "Penny Marshall", "ranked": ranked, "evidence": hybgrag_evidence(REFS)}


def test_each_line_shows_the_evidence_of_its_own_item():
    _, items = answer_view(_hybgrag_output())
    assert [it.name for it in items] == ["Penny Marshall", "Gary Ross", "Anne Spielberg"]
    for it in items:
        assert it.evidence and all(it.name in e["text"] for e in it.evidence), (it.name, it.evidence)
    text = render_text(_hybgrag_output())
    gary = text.split(" 2. Gary Ross")[1].split(" 3. ")[0]
    assert "Anne Spielberg" not in gary and "written_by → Gary Ross" in gary  # the old zip paired these wrongly


def test_the_answer_comes_first_and_lines_follow_the_score_they_show():
    out = _hybgrag_output()
    out["ranked"] = [out["ranked"][2], out["ranked"][0], out["ranked"][1]]  # a method's own order (own entities last)
    text = render_text(out)
    assert text.splitlines()[0] == "answer: Penny Marshall"
    shown = [float(line.split("[kg ")[1].rstrip("]")) for line in text.splitlines() if "[kg " in line]
    assert shown == sorted(shown, reverse=True) == [0.41, 0.16, 0.15]


def test_passages_are_one_line_and_cut():
    assert one_line("a\n\nb\tc  d") == "a b c d"
    assert one_line("word " * 50, width=20) == "word word word word…" and len(one_line("x" * 500, 30)) == 30
    text = render_text(_hybgrag_output())
    assert "Gary Ross wrote Big." in text and all(len(line) < 140 for line in text.splitlines())


def test_evidence_found_by_name_when_its_id_is_a_path_id():
    # HydraRAG cites a passage or path id; the entity it reaches is named in the path
    ev = [
        {"source": "doc", "id": "doc:1:0", "text": "Big → directed by → Penny Marshall", "path": ["Big"]},
        {"source": "kg", "id": "kg:1:0", "text": "Big → written by → Gary Ross", "path": None},
    ]
    assert evidence_of({"id": "e9", "name": "Penny Marshall"}, ev) == ev[:1]
    assert evidence_of({"id": "e9", "name": "Marshall Penn"}, ev) == []
    assert "(no evidence of its own)" in render_text({"answer": "x", "ranked": [{"name": "y", "score": 1}]})


def test_an_empty_output_reads_as_no_answer():
    assert render_text({}) == "answer: (none)"


def test_cli_ask_prints_the_answer_then_numbered_evidence(capsys):
    assert main(["ask", "who directed Forrest Gump", "--top-k", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "answer: Robert Zemeckis" and lines[1] == "evidence:"
    assert lines[2].startswith(" 1. Robert Zemeckis  [kg ") and "directed by → Robert Zemeckis" in lines[3]
    sources = {line.split("[")[1].split()[0] for line in lines if "  [" in line}
    assert sources <= {"kg", "doc", "web"}
