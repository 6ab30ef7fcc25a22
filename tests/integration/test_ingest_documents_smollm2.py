"""Documents → KB with the real extraction path: the bundled SmolLM2 behind llama.cpp's OpenAI-compatible
HTTP server, called through ``hybridrag ingest --documents ... --extract-llm ... --llm-base-url ...``.

A 135M model extracts little and not always well: whatever triples it produces must be grounded in
their chunk and carry provenance; the calls, tokens and chunks must be accounted for in the manifest.
"""

from __future__ import annotations

import json

import pytest
from test_openai_compatible import ALIAS, openai_server  # noqa: F401 - the llama.cpp server fixture

from hybridrag.app.cli import main
from hybridrag.kb.extract import in_chunk
from hybridrag.kb.kb_dir import resolve_build
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.provenance import Provenance, read_jsonl

pytestmark = pytest.mark.integration

DOCS = {
    "curie.md": "# Marie Curie\n\nMarie Curie was born in Warsaw. She won the Nobel Prize in Physics in 1903.\n",
    "sorbonne.txt": "The Sorbonne is a university in Paris. Marie Curie taught at the Sorbonne.\n",
}


def test_documents_to_kb_through_the_local_server(openai_server, tmp_path, capsys):  # noqa: F811
    base, log = openai_server
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    kb = tmp_path / "kb"
    argv = [
        "ingest",
        "--kb",
        str(kb),
        "--documents",
        *(str(tmp_path / n) for n in DOCS),
        "--extract-llm",
        f"openai:{ALIAS}",
        "--llm-base-url",
        base,
    ]
    assert main(argv) == 0, capsys.readouterr().err
    assert "added 2 documents (2 chunks)" in capsys.readouterr().out

    build = resolve_build(kb).path
    manifest = json.loads((build / "manifest.json").read_text())
    x = manifest["documents"]["extraction"]
    assert x["llm"] == f"openai:{ALIAS}" and x["chunks_from_cache"] == 0
    assert x["chunks_extracted"] + len(x["chunks_failed"]) == 2
    assert x["usage"]["llm_calls"] >= 2 and x["usage"]["input_tokens"] > 0 and x["usage"]["output_tokens"] > 0
    # every call went over HTTP to the server
    assert log.read_text(errors="replace").count("POST /v1/chat/completions") >= x["usage"]["llm_calls"]

    chunks = {d.id: d.text for d in _passages(build)}
    assert set(chunks) == {"curie.md#0", "sorbonne.txt#0"}
    store = InMemoryGraphStore.load(build)
    names = {e.id: e.name for e in store.entities}
    prov = Provenance.load(kb)
    assert len(prov.triples) == store.counts()["triples"], "every graph triple has its provenance row"
    for t, cited in prov.triples.items():  # whatever the model found is grounded in the chunk it came from
        assert cited and all(c in chunks for c in cited)
        assert any(in_chunk(names[t.head], chunks[c]) and in_chunk(names[t.tail], chunks[c]) for c in cited), t
    # greedy decoding: SmolLM2 names at least one entity of these chunks (its relations are mostly unusable)
    assert store.counts()["entities"] >= 1 and all(any(in_chunk(n, t) for t in chunks.values()) for n in names.values())
    assert isinstance(read_jsonl(build / "merges.jsonl"), list)

    # a second run over the same documents asks nothing: they are already in the KB
    calls = log.read_text(errors="replace").count("POST /v1/chat/completions")
    assert main(argv) == 0 and "unchanged" in capsys.readouterr().out
    assert log.read_text(errors="replace").count("POST /v1/chat/completions") == calls


def _passages(build):
    from hybridrag.kb.text_index import load_docs

    return [d for d in load_docs(build / "docs.jsonl") if d.kind == "passage"]
