"""MoR on a documents KB with an extracted graph: textual matching ranks the passages, not bare names.

With ``--extract-llm rules`` the KB holds entities whose only text is their name, beside the
passages (tied to no entity). When no followed plan reaches a candidate, textual matching of the
question over entities would rank names only and lose every passage; the passages rank instead.
"""

from __future__ import annotations

import pytest
from test_answers_documents import DOCUMENTS, QUESTION, ReplyBySchema

from hybridrag.agents.extraction import ingest_documents
from hybridrag.agents.mor.organize import textual_only
from hybridrag.graphs import context_for, get_graph

ONE_NODE = {"routes": [{"nodes": [{"type": "person", "restriction": "Charles Babbage"}]}]}  # not a plan


@pytest.fixture(scope="module")
def rules_kb(tmp_path_factory) -> str:
    """The three documents ingested with the rules extractor: passages, and entities named in them."""
    src = tmp_path_factory.mktemp("graph-docs")
    for name, text in DOCUMENTS.items():
        (src / name).write_text(text + "\n", encoding="utf-8")
    kb = tmp_path_factory.mktemp("graph-kb") / "kb"
    ingest_documents(kb, [src], extract_llm="rules", progress=False)
    return str(kb)


@pytest.fixture
def one_node_model():
    """A model whose plan is a single node (textual matching instead), registered as ``fake:onenode``."""
    from hybridrag.agents.llm.models import forget_model, register_model

    register_model("fake:onenode", ReplyBySchema(replies={"Plan": ONE_NODE}))
    yield
    forget_model("fake:onenode")


def test_the_kb_has_entities_beside_the_passages(rules_kb):
    from hybridrag.graphs.mor import MoRContext
    from hybridrag.graphs.runtime import resolve_kb

    kb = resolve_kb(MoRContext(kb=rules_kb))
    assert any(d.entity_id for d in kb.docs), "the rules extracted no entity: the test would not test the fix"
    assert "documents" in kb.manifest


def test_textual_matching_on_a_documents_graph_ranks_the_passages(rules_kb, one_node_model):
    ctx = context_for("mor", kb=rules_kb, llm="fake:onenode")
    out = get_graph("mor").invoke({"question": QUESTION}, context=ctx)
    nodes = [s["node"] for s in out["trace"]]
    assert "match_text" in nodes, nodes  # the plan was not followed
    assert out["evidence"] and all("#" in e["id"] for e in out["evidence"]), out["evidence"]
    assert out["ranked"][0]["id"] == "ada.txt#0", out["ranked"]
    assert [e["id"] for e in out["evidence"]][0] == "ada.txt#0"


def test_textual_only():
    assert textual_only(None)
    assert textual_only({"kind": "text", "candidates": [{"id": "x"}]})
    assert textual_only({"kind": "plan", "candidates": []})
    assert not textual_only({"kind": "plan", "candidates": [{"id": "x"}]})
