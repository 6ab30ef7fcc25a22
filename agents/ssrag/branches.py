"""SSRAG's two retrieval branches (Algorithm 3): texts and graph nodes, then the nodes as text.

:func:`vectors` (FAISS over the local corpus, or web snippets on the web route), :func:`local_graph`
(the KB graph walked from the linked entities) or :func:`web_graph` (the graph of the triples
extracted from the web results), and :func:`to_text` (LLM_Convert). The retrieval steps run as
tools (:func:`agents.ssrag.tools.step`: a user's own tool when the context names one). Each
returns an :class:`~agents.ssrag.outcome.Outcome`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from hybridrag.agents.llm.structured import add_usage
from hybridrag.agents.ssrag import retrieval as ret
from hybridrag.agents.ssrag import shots
from hybridrag.agents.ssrag.chain import chain_text, example_chain
from hybridrag.agents.ssrag.context import SSRAGContext
from hybridrag.agents.ssrag.outcome import Outcome
from hybridrag.agents.ssrag.small import small
from hybridrag.agents.ssrag.tools import step
from hybridrag.kb.base import KnowledgeBase


def vectors(kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """Vector branch: FAISS over the local corpus, or web snippets (local when the web is unavailable)."""
    args = {"query": state["query"], "k": ctx.vector_k, "source": state["source"], "web_k": ctx.web_k}
    items, used, note = step(ctx, kb, "vector_retrieval", args)
    facts = {"source": used, "top": [i["id"] for i in items[:5]]}
    return Outcome({"vector": items, "vector_source": used}, f"{len(items)} texts from {used}", {}, note, facts)


def chain_of(kb: KnowledgeBase, ctx: SSRAGContext, question: str) -> list[tuple[str, str]]:
    """The relation chain the graph branch also follows: the nearest solved example's, under the small-model rules.

    Returns [] when ``chain_walk`` is off or the paper's roles run.
    """
    if not (ctx.chain_walk and small(ctx)):
        return []
    return example_chain(shots.nearest(kb, question, ctx.n_examples, ctx.examples))


def local_graph(kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any], chain: list) -> Outcome:
    """Graph branch, local corpus: the KB graph walked from the query's linked entities (and along ``chain``)."""
    args = {
        "query": state["query"],
        "question": state["question"],
        "entities": state["entities"],
        "k": ctx.graph_k,
        "hops": ctx.graph_hops,
        "max_facts": ctx.max_node_facts,
        "link_min_score": ctx.link_min_score,
        "text_edges": ctx.text_edges,
        "scoring": ctx.fact_scoring,
        "chain": chain,
    }
    nodes, seeds = step(ctx, kb, "graph_retrieval", args)
    ends = [n["id"] for n in nodes if n.get("chain")]
    decision = f"{len(nodes)} nodes from {len(seeds)} seeds" + (
        f", {len(ends)} at the example's chain end" if chain else ""
    )
    facts: dict[str, Any] = {"source": "local", "seeds": seeds[:10], "nodes": [n["id"] for n in nodes]}
    if chain:
        facts.update(chain=chain_text(chain), chain_ends=ends[:10])
    return Outcome({"nodes": nodes}, decision, {}, None, facts)


def web_graph(model: BaseChatModel, kb: KnowledgeBase, ctx: SSRAGContext, state: Mapping[str, Any]) -> Outcome:
    """Graph branch, web route: a graph of the triples extracted from the web results."""
    web = [i for i in state.get("vector", []) if i["source"] == "web"]
    args = {
        "question": state["question"],
        "entities": [e["name"] for e in state["entities"]],
        "web": web,
        "k": ctx.graph_k,
        "max_facts": ctx.max_node_facts,
    }
    extra = {"model": model if ctx.graph_to_text == "llm" else None, "method": ctx.structured_method}
    nodes, triples, calls, note = step(ctx, kb, "web_graph_retrieval", args, extra)
    facts = {"source": "web", "nodes": [n["id"] for n in nodes]}
    return Outcome({"nodes": nodes}, f"{len(nodes)} nodes from {triples} web triples", calls, note, facts)


def to_text(model: BaseChatModel, ctx: SSRAGContext, nodes: list[dict]) -> Outcome:
    """LLM_Convert: each node and its relations as prose, the ``llm_nodes`` most relevant by the LLM.

    The other nodes, every node under ``graph_to_text="template"`` or the small-model rules, and a
    node whose conversion failed keep their facts as sentences.
    """
    items: list[dict] = []
    calls: dict = {}
    notes: list[str] = []
    by_relevance = sorted(range(len(nodes)), key=lambda i: (nodes[i].get("hop", 0), -(nodes[i].get("prior") or 0)))
    converted = set(by_relevance[: ctx.llm_nodes]) if ctx.graph_to_text == "llm" and not small(ctx) else set()
    for i, node in enumerate(nodes):
        text, used, note = ret.node_to_text(model if i in converted else None, node, ctx.structured_method)
        calls = add_usage(calls, used)
        items.append(ret.graph_item(node, text))
        notes += [f"{node['id']}: {note}"] if note else []
    made = "template" if small(ctx) else ctx.graph_to_text
    return Outcome({"graph": items}, f"{len(items)} graph texts ({made})", calls, "; ".join(notes) or None)
