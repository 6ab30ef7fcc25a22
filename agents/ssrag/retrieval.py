"""SSRAG's two retrieval branches and graph-to-text (paper §III-C, §III-D; Algorithm 3 lines 3-6).

- Vector branch: nearest neighbours of the query in the FAISS index of the local corpus, or,
  on the web route, the web snippets (Tavily stands in for the paper's Google API). When the
  web is unavailable (no TAVILY_API_KEY, a failed call) or returns nothing, the branch falls
  back to the local corpus and says so.
- Graph branch: the query's entities linked to the KB graph (the paper runs Cypher over
  Neo4j; here the graph-store protocol), their neighbourhood up to ``hops``, and for each
  relevant node its relations (``GetRelation``). Seeds come first; other nodes are kept by the
  cosine of their facts to the query (our pre-selection, so at most ``graph_k`` nodes are sent
  to the LLM; a neighbour is scored on its first ``max_facts`` facts in storage order). Each
  kept node then keeps its ``max_facts`` facts most relevant to the question (cosine of the
  fact's sentence to the question vector; the first ``FACT_POOL`` in storage order are scored),
  most relevant first. On the web route the graph branch still reads the local KG: no graph is built
  from web snippets.
- Graph-to-text (``LLM_Convert``): one LLM call per node writes its facts as prose; an
  unparseable or empty reply, or one that drops the node's name, keeps the facts as text.

Items are JSON-ready dicts ``{id, kind, name, text, source: doc|kg|web, entity_id, path, score}``.
"""

from __future__ import annotations

import re

import numpy as np
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from agents.llm.structured import call_structured
from kb.base import Hit, KnowledgeBase
from kb.embeddings import embed_matrix
from kb.model import Triple
from prompts import ssrag as P
from prompts.data_block import data_block, data_list
from tools import web
from tools.retrieval import mentions_in

MAX_NEIGHBOURS = 300  # neighbourhood nodes scored for pre-selection (bounds embedding work)
FACT_POOL = 500  # facts of one kept node scored for relevance (bounds embedding work on hub nodes)


class GraphText(BaseModel):
    """LLM_Convert: a node and its relations as prose."""

    text: str = Field(description="A short paragraph stating the facts.")


def _doc_item(kb: KnowledgeBase, h: Hit) -> dict:
    d = h.doc
    name = kb.name(d.id) if d.kind == "entity" else f"passage about {kb.name(d.entity_id or d.id)}"
    return {"id": d.id, "kind": d.kind, "name": name, "text": d.text, "source": "doc",
            "entity_id": d.entity_id, "path": None, "score": float(h.score)}


def vector_branch(kb: KnowledgeBase, query: str, source: str, k: int,
                  web_k: int) -> tuple[list[dict], str, str | None]:
    """Top-k texts from the routed source; returns (items, source used, fallback note or None)."""
    note = None
    if source == "web":
        try:
            found = web.web_search(query, web_k)
        except web.WebSearchError as exc:
            note = f"web skipped ({exc}); local corpus instead"
        else:
            items = [{"id": r["id"] or f"web:{i}", "kind": "web", "name": r["name"], "text": r["text"],
                      "source": "web", "entity_id": None, "path": None, "score": float(r["score"])}
                     for i, r in enumerate(found) if r.get("text")]
            if items:
                return items, "web", None
            note = "web returned nothing; local corpus instead"
    return [_doc_item(kb, h) for h in kb.dense_search(query, k)], "local", note


def seed_entities(kb: KnowledgeBase, query: str, entities: list[dict], min_score: float) -> list[str]:
    """Entity ids of the query: every exact alias match, else a dense link, plus verbatim mentions."""
    ids: list[str] = []
    for e in entities:
        exact = [x.id for s in e.get("surfaces") or [e["name"]] for x in kb.graph.lookup(s)]
        ids += exact or [x.id for x in kb.link(e["name"], k=1, min_score=min_score)]
    return list(dict.fromkeys(ids + mentions_in(kb, query)))


def _sentence(kb: KnowledgeBase, t: Triple) -> str:
    return f"{kb.name(t.head)} {t.type.replace('_', ' ')} {kb.name(t.tail)}"


def node_facts(kb: KnowledgeBase, node: str, max_facts: int, qv: np.ndarray | None = None) -> dict:
    """GetRelation(node): the node with up to ``max_facts`` of its relations, verbalised.

    With a question vector ``qv`` the facts kept are the most relevant ones (cosine of each
    sentence to ``qv``, ties in storage order), most relevant first; without, the first ones.
    """
    triples = kb.graph.neighbors([node])[: FACT_POOL if qv is not None else max_facts]
    facts = [_sentence(kb, t) for t in triples]
    order = list(range(len(triples)))
    if qv is not None and len(triples) > 1:
        order = [int(i) for i in np.argsort(-(embed_matrix(kb.embeddings, facts) @ qv), kind="stable")]
    order = order[:max_facts]
    return {"id": node, "name": kb.name(node), "facts": [facts[i] for i in order],
            "triples": [[triples[i].head, triples[i].type, triples[i].tail] for i in order]}


def template_text(node: dict) -> str:
    """The facts of a node as plain sentences (no LLM)."""
    return ". ".join(node["facts"]) + "." if node["facts"] else node["name"]


def relevant_nodes(kb: KnowledgeBase, seeds: list[str], qv: np.ndarray, hops: int, k: int,
                   max_facts: int, fact_qv: np.ndarray | None = None) -> list[dict]:
    """Seeds, then their neighbourhood ranked by the cosine of each node's facts to the query.

    Each kept node's facts are then the ``max_facts`` most relevant to ``fact_qv`` (the
    question's vector; ``qv`` when not given).
    """
    if not seeds or k <= 0:
        return []
    fact_qv = qv if fact_qv is None else fact_qv
    nodes = [{**node_facts(kb, s, max_facts, fact_qv), "prior": None} for s in seeds[:k]]
    room = k - len(nodes)
    if room > 0 and hops > 0:
        ego = kb.graph.ego_graph(seeds, radius=hops)
        others = [n for n in ego.distance if n not in set(seeds)][:MAX_NEIGHBOURS]
        sheets = [node_facts(kb, n, max_facts) for n in others]
        if sheets:
            scores = embed_matrix(kb.embeddings, [template_text(s) for s in sheets]) @ qv
            for i in np.argsort(-scores, kind="stable")[:room]:
                nodes.append({**node_facts(kb, sheets[i]["id"], max_facts, fact_qv),
                              "prior": round(float(scores[i]), 4)})
    return nodes


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


def node_to_text(model: BaseChatModel | None, node: dict, method: str) -> tuple[str, dict, str | None]:
    """LLM_Convert(node, nodeRel); the facts themselves when there is no model or no usable reply."""
    if model is None or not node["facts"]:
        return template_text(node), {}, None
    messages = [("system", P.GRAPH_TEXT_SYSTEM.template),
                ("human", P.GRAPH_TEXT.format(entity=data_block(node["name"]), facts=data_list(node["facts"])))]
    reply, usage = call_structured(model, GraphText, messages, role="graph_to_text", method=method)
    text = " ".join((reply.text if reply else "").split())
    if not text:
        return template_text(node), usage, "unparseable or empty: facts kept as text"
    if not _mentions(text, node["name"]):
        return template_text(node), usage, "reply dropped the entity name: facts kept as text"
    return text, usage, None


def graph_item(node: dict, text: str) -> dict:
    """A converted node as a retrieval item (kind entity, source kg, its facts as the path)."""
    return {"id": node["id"], "kind": "entity", "name": node["name"], "text": text, "source": "kg",
            "entity_id": node["id"], "path": node["facts"], "score": node.get("prior") or 0.0}
