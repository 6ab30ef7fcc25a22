"""SSRAG's two retrieval branches and graph-to-text (paper §III-C, §III-D; Algorithm 3 lines 3-6).

- Vector branch: nearest neighbours of the query in the FAISS index of the local corpus, or,
  on the web route, the web snippets (Tavily stands in for the paper's Google API). When the
  web is unavailable (no TAVILY_API_KEY, a failed call) or returns nothing, the branch falls
  back to the local corpus and says so.
- Graph branch: the query's entities linked to the KB graph (the paper runs Cypher over
  Neo4j; here the graph-store protocol) and the relevant nodes around them with their
  relations (``GetRelation``), chosen hop by hop in :mod:`agents.ssrag.nodes`. On the web
  route the graph branch reads the knowledge built from the web results instead
  (:mod:`agents.ssrag.web_graph`).
- Graph-to-text (``LLM_Convert``): one LLM call per node writes its facts as prose; an
  unparseable or empty reply, or one that drops the node's name, keeps the facts as text.

Items are JSON-ready dicts ``{id, kind, name, text, source: doc|kg|web, entity_id, path, score}``.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from hybridrag.agents.llm.structured import call_structured
from hybridrag.agents.ssrag.nodes import node_facts, relevant_nodes, template_text
from hybridrag.agents.ssrag.vectors import query_vector
from hybridrag.kb.base import Hit, KnowledgeBase
from hybridrag.prompts import ssrag as P
from hybridrag.prompts.data_block import data_block, data_list
from hybridrag.tools import web
from hybridrag.tools.fused_text import hybrid_search
from hybridrag.tools.retrieval import mentions_in
from hybridrag.tools.text import name_pattern

__all__ = [
    "node_facts",
    "relevant_nodes",
    "template_text",
    "vector_branch",
    "seed_entities",
    "node_to_text",
    "graph_item",
    "GraphText",
]


class GraphText(BaseModel):
    """LLM_Convert: a node and its relations as prose."""

    text: str = Field(description="A short paragraph stating the facts.")


def _owner(d) -> str:
    """The entity id whose name labels a hit: the entity itself, or the one a passage is about."""
    return d.id if d.kind == "entity" else d.entity_id or d.id


def _doc_items(kb: KnowledgeBase, hits: list[Hit]) -> list[dict]:
    """Hits as items, their names read with one ``names`` call."""
    names = kb.names(_owner(h.doc) for h in hits) if hits else {}
    return [
        {
            "id": h.doc.id,
            "kind": h.doc.kind,
            "name": names[_owner(h.doc)] if h.doc.kind == "entity" else f"passage about {names[_owner(h.doc)]}",
            "text": h.doc.text,
            "source": "doc",
            "entity_id": h.doc.entity_id,
            "path": None,
            "score": float(h.score),
        }
        for h in hits
    ]


def vector_branch(kb: KnowledgeBase, query: str, source: str, k: int, web_k: int) -> tuple[list[dict], str, str | None]:
    """Top-k texts from the routed source; returns (items, source used, fallback note or None)."""
    note = None
    if source == "web":
        try:
            found = web.web_search(query, web_k)
        except web.WebSearchError as exc:
            note = f"web skipped ({exc}); local corpus instead"
        else:
            items = [
                {
                    "id": r["id"] or f"web:{i}",
                    "kind": "web",
                    "name": r["name"],
                    "text": r["text"],
                    "source": "web",
                    "entity_id": None,
                    "path": None,
                    "score": float(r["score"]),
                }
                for i, r in enumerate(found)
                if r.get("text")
            ]
            if items:
                return items, "web", None
            note = "web returned nothing; local corpus instead"
    dense = lambda q, n: kb.dense_search(query_vector(kb, q), n)  # noqa: E731 - the cached query vector
    return _doc_items(kb, hybrid_search(kb, query, k, dense=dense)), "local", note  # dense + BM25 fused


def seed_entities(kb: KnowledgeBase, query: str, entities: list[dict], min_score: float) -> list[str]:
    """Entity ids of the query: every exact alias match, else a dense link.

    The query's verbatim KB mentions count only when no extracted entity links (they include
    titles that are common words).
    """
    ids: list[str] = []
    for e in entities:
        exact = [x.id for s in e.get("surfaces") or [e["name"]] for x in kb.graph.lookup(s)]
        ids += exact or [x.id for x in kb.link(e["name"], k=1, min_score=min_score)]
    return list(dict.fromkeys(ids or mentions_in(kb, query)))


def _mentions(text: str, name: str) -> bool:
    return name_pattern(name).search(text) is not None


def node_to_text(model: BaseChatModel | None, node: dict, method: str) -> tuple[str, dict, str | None]:
    """LLM_Convert(node, nodeRel); the facts themselves when there is no model or no usable reply."""
    if model is None or not node["facts"]:
        return template_text(node), {}, None
    messages = [
        ("system", P.GRAPH_TEXT_SYSTEM.template),
        ("human", P.GRAPH_TEXT.format(entity=data_block(node["name"]), facts=data_list(node["facts"]))),
    ]
    reply, usage = call_structured(model, GraphText, messages, role="graph_to_text", method=method)
    text = " ".join((reply.text if reply else "").split())
    if not text:
        return template_text(node), usage, "unparseable or empty: facts kept as text"
    if not _mentions(text, node["name"]):
        return template_text(node), usage, "reply dropped the entity name: facts kept as text"
    return text, usage, None


def graph_item(node: dict, text: str) -> dict:
    """A converted node as a retrieval item (kind entity, source kg, its facts as the path)."""
    return {
        "id": node["id"],
        "kind": "entity",
        "name": node["name"],
        "text": text,
        "source": "kg",
        "entity_id": node["id"],
        "path": node["facts"],
        "score": node.get("prior") or 0.0,
        **({"chain": True} if node.get("chain") else {}),
    }
