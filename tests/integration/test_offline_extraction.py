"""Documents → a hybrid KB offline: ``hybridrag ingest --extract-llm rules`` builds a graph with no model,
and a question is answered through one of its edges (real embeddings, FAISS, the CLI a user runs).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from hybridrag.app.cli import main
from hybridrag.graphs import context_for, get_graph
from hybridrag.kb.extract import in_chunk
from hybridrag.kb.kb_dir import resolve_build
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.provenance import Provenance

pytestmark = pytest.mark.integration

DOCS = {
    "ada.txt": "Ada Lovelace was an English mathematician. She worked with Charles Babbage on the Analytical Engine.\n",
    "interscope.md": (
        "# Interscope Records\n\nInterscope Records is an American record label. An imprint of Interscope Geffen "
        "A&M Records, its parent company is Universal Music Group, a subsidiary of Vivendi S.A.\n"
    ),
    "baiul.txt": (
        "Oksana Baiul (born November 16, 1977) is a Ukrainian former competitive figure skater. "
        "She is the 1993 World champion.\n"
    ),
}


@pytest.fixture(scope="module")
def rules_kb(tmp_path_factory):
    """A KB ingested from the documents above with the rule extractor."""
    folder = tmp_path_factory.mktemp("offline")
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    kb = folder / "kb"
    code = main(["ingest", "--kb", str(kb), "--documents", str(folder), "--extract-llm", "rules"])
    assert code == 0
    return kb


def test_rules_extract_a_grounded_graph_with_provenance(rules_kb):
    build = resolve_build(rules_kb).path
    x = json.loads((build / "manifest.json").read_text())["documents"]["extraction"]
    assert x["llm"] == "rules" and x["chunks_extracted"] == 3 and x["chunks_failed"] == []
    assert x["usage"] == {} and x["triples"] >= 6
    rows = [json.loads(line) for line in (build / "provenance.jsonl").read_text().splitlines()]
    facts = {(r["head_name"], r["relation"], r["tail_name"]) for r in rows}
    assert ("Ada Lovelace", "worked_with", "Charles Babbage") in facts
    assert ("Interscope Records", "parent_company", "Universal Music Group") in facts
    assert ("Oksana Baiul", "born_on", "November 16, 1977") in facts
    assert len(facts) == x["triples"] == InMemoryGraphStore.load(build).counts()["triples"]
    for row in rows:  # every fact is stated by the document chunk it came from
        (chunk,) = row["chunks"]
        text = DOCS[chunk.split("#")[0]]
        assert in_chunk(row["head_name"], text) and in_chunk(row["tail_name"], text), row
    assert Provenance.load(rules_kb).where("ada.txt#0")["document"]


def test_a_question_is_answered_through_an_extracted_edge(rules_kb, capsys):
    assert main(["ask", "what is the parent company of Interscope Records", "--kb", str(rules_kb)]) == 0
    assert capsys.readouterr().out.startswith("answer: Universal Music Group")
    out = get_graph("fusion").invoke(
        {"question": "who worked with Charles Babbage"}, context=context_for("fusion", kb=str(rules_kb))
    )
    assert out["answer"] == "Ada Lovelace"
    edges = [e["text"] for e in out["evidence"] if e["source"] == "kg"]
    assert "Ada Lovelace → worked with → Charles Babbage" in edges


def _readme_rules_block() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("## From documents to a KB")
    blocks = [b.split("```", 1)[0] for b in readme[start:].split("```bash\n")[1:]]
    return next(b for b in blocks if "--extract-llm rules" in b)


def test_the_readme_offline_graph_path_runs_as_shown(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "ada.txt").write_text(DOCS["ada.txt"], encoding="utf-8")  # the README's earlier echo
    echo, ingest, ask, shown = _readme_rules_block().strip().splitlines()
    text, target = re.fullmatch(r'echo "(.*)" > (\S+)', echo).groups()
    Path(target).write_text(text + "\n", encoding="utf-8")
    argv = shlex.split(ingest.split("#")[0])
    assert main(argv[1:]) == 0
    counts = ingest.split("# ")[1]
    assert counts in capsys.readouterr().out
    assert main(shlex.split(ask)[1:]) == 0
    out = capsys.readouterr().out
    answer, edge = re.fullmatch(r"# answer: (.*), through the edge (.*)", shown).groups()
    assert out.startswith(f"answer: {answer}\n") and f"kg: {edge}" in out


def test_a_text_kb_gains_the_graph_when_ingested_again_with_rules(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ada.txt").write_text(DOCS["ada.txt"], encoding="utf-8")
    kb, docs = str(tmp_path / "kb"), str(tmp_path / "docs")
    assert main(["ingest", "--kb", kb, "--documents", docs]) == 0
    assert "now 0 entities, 0 triples, 1 passages" in capsys.readouterr().out
    assert main(["ingest", "--kb", kb, "--documents", docs, "--extract-llm", "rules"]) == 0
    out = capsys.readouterr().out
    assert "added 0 documents" in out and "1 passages" in out and " 0 triples" not in out
    assert main(["ingest", "--kb", kb, "--documents", docs, "--extract-llm", "rules"]) == 0
    assert "unchanged" in capsys.readouterr().out  # extracted once: not asked again
