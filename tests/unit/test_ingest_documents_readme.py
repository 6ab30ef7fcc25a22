"""README's "From documents to a KB" snippets run as shown (the extraction model behind the spec is the fake)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from fake_chat import ScriptedChatModel
from ingest_documents_corpus import EXTRACTIONS, write_corpus

from hybridrag.app.cli import main

ROOT = Path(__file__).resolve().parents[2]

README_CLI = """\
hybridrag ingest --kb my_docs --documents docs/ --extract-llm openai:gpt-4o-mini --schema schema.json
hybridrag ask "who founded Veltrix Robotics" --kb my_docs
"""

README_SCHEMA = """\
{"entity_types": ["person", "organization", "city", "product"],
 "relations": {"founded_by": ["organization", "person"], "headquartered_in": ["organization", "city"],
               "built_by": ["product", "organization"]}}
"""

README_PYTHON = """\
from hybridrag.graphs import context_for, get_graph
from hybridrag.kb.provenance import Provenance

ctx = context_for("fusion", kb="my_docs")
out = get_graph("fusion").invoke({"question": "who founded Veltrix Robotics"}, context=ctx)
sources = Provenance.load("my_docs")
for item in out["evidence"][:2]:
    print(item["source"], item["text"].splitlines()[0], "<-", sources.source_chunks(item))
"""


def section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.find("## From documents to a KB")
    assert start >= 0, "README has no 'From documents to a KB' section"
    end = readme.find("\n## ", start + 1)
    return readme[start:] if end < 0 else readme[start:end]


def test_readme_shows_these_snippets():
    text = section()
    assert README_CLI in text and README_SCHEMA in text and README_PYTHON in text


@pytest.fixture
def in_docs_folder(tmp_path, monkeypatch):
    """A working directory with the corpus in docs/, the README's schema, and the fake behind the spec."""
    from hybridrag.agents.llm.models import forget_model, register_model

    write_corpus(tmp_path / "docs")
    (tmp_path / "schema.json").write_text(README_SCHEMA, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    model = ScriptedChatModel(script=list(EXTRACTIONS[i] for i in (2, 1, 3, 0)))  # docs/ is read sorted
    register_model("openai:gpt-4o-mini", model)
    yield model
    forget_model("openai:gpt-4o-mini")


def test_readme_snippets_run(in_docs_folder, capsys):
    ingest_line, ask_line = README_CLI.splitlines()
    assert main(shlex.split(ingest_line)[1:]) == 0
    assert "added 4 documents (4 chunks)" in capsys.readouterr().out and not in_docs_folder.script
    manifest = json.loads(Path("my_docs/manifest.json").read_text())
    assert manifest["documents"]["extraction"]["schema"]["entity_types"] == [
        "person",
        "organization",
        "city",
        "product",
    ]
    assert main(shlex.split(ask_line)[1:]) == 0
    assert capsys.readouterr().out.startswith("answer: Ada Okafor")
    exec(compile(README_PYTHON, "README", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "kg Veltrix Robotics → founded by → Ada Okafor <- ['veltrix.md#0']",
        "doc # Veltrix Robotics <- ['veltrix.md#0']",
    ]
