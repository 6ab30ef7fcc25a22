"""SSRAG's retrieval steps as tools: vector_retrieval, graph_retrieval, web_graph_retrieval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, Field

from hybridrag.agents.ssrag import retrieval as ret
from hybridrag.agents.ssrag import web_graph as wg
from hybridrag.agents.ssrag.chain import with_chain_ends
from hybridrag.agents.ssrag.vectors import query_vector
from hybridrag.tools.steps import PASSAGES, VIEW_LIMIT, Step, StepCall, listed, passage, run_step, score_of
from hybridrag.tools.text_hops import has_passages, text_steps

NODES = (
    "a list of graph nodes: dicts with id, name and facts (sentences about the node), optional prior "
    "(score); or a list of passages (LangChain Documents, or dicts with id and text), each a node whose fact "
    "is its text"
)


class VectorArgs(BaseModel):
    """Arguments of the vector_retrieval step."""

    query: str = Field(description="The enhanced query.")
    k: int = Field(description="How many local texts to return.")
    source: str = Field(default="local", description="The routed source: local or web.")
    web_k: int = Field(default=5, description="How many web results to return (web route).")


class GraphArgs(BaseModel):
    """Arguments of the graph_retrieval step."""

    query: str = Field(description="The enhanced query (walks the graph).")
    question: str = Field(description="The question (ranks each node's facts).")
    entities: list[dict] = Field(default_factory=list, description="Extracted entities: name, surfaces.")
    k: int = Field(description="How many nodes to return.")
    hops: int = Field(default=1, description="Walk depth from the linked entities.")
    max_facts: int = Field(default=10, description="Facts kept per node.")
    link_min_score: float = Field(default=0.5, description="Dense link threshold of an entity name.")
    text_edges: bool = Field(default=False, description="Also passage sentences naming a node.")
    scoring: str = Field(default="parts", description="How facts are scored: parts or sentence.")
    chain: list[tuple[str, str]] = Field(
        default_factory=list,
        description=(
            "A relation chain to follow from the linked entities too, as (relation, direction) pairs "
            "(the small-model rules' chain walk; empty: the relevance walk alone)."
        ),
    )


class WebGraphArgs(BaseModel):
    """Arguments of the web_graph_retrieval step."""

    question: str = Field(description="The question (ranks the facts).")
    entities: list[str] = Field(default_factory=list, description="Names of the extracted entities.")
    web: list[dict] = Field(description="The web results the vector branch fetched.")
    k: int = Field(description="How many nodes to return.")
    max_facts: int = Field(default=10, description="Facts kept per node.")


def _items_view(items: list[dict]) -> list[dict]:
    return [{k: i.get(k) for k in ("id", "kind", "name", "text", "source", "score")} for i in items[:VIEW_LIMIT]]


def _nodes_view(nodes: list[dict]) -> list[dict]:
    return [
        {"id": n["id"], "name": n["name"], "facts": n["facts"][:10], "hop": n.get("hop"), "prior": n.get("prior")}
        for n in nodes[:VIEW_LIMIT]
    ]


def _vector_default(kb: Any):
    def run(query: str, k: int, source: str = "local", web_k: int = 5, **_: Any) -> tuple[tuple, dict]:
        items, used, note = ret.vector_branch(kb, query, source, k, web_k)
        return (items, used, note), {"source": used, "note": note, "items": _items_view(items)}

    return run


def _vector_adopt(kb: Any, output: Any, call: StepCall) -> tuple[list[dict], str, str | None]:
    items = []
    for item in listed(output, call):
        p = passage(item, call)
        src = "web" if (item.metadata if isinstance(item, Document) else item).get("source") == "web" else "doc"
        name = p["name"] or (f"passage about {kb.name(p['entity_id'])}" if p["entity_id"] else p["id"])
        items.append(
            {
                "id": p["id"],
                "kind": p["kind"],
                "name": name,
                "text": p["text"],
                "source": src,
                "entity_id": p["entity_id"],
                "path": None,
                "score": p["score"],
            }
        )
    used = "web" if items and all(i["source"] == "web" for i in items) else "local"
    return items, used, None


def _graph_default(kb: Any):
    def run(
        query: str,
        question: str,
        k: int,
        entities: list[dict] | None = None,
        hops: int = 1,
        max_facts: int = 10,
        link_min_score: float = 0.5,
        text_edges: bool = False,
        scoring: str = "parts",
        chain: list | None = None,
        **_: Any,
    ) -> tuple[tuple, dict]:
        seeds = ret.seed_entities(kb, query, entities or [], link_min_score)
        fact_qv = query_vector(kb, question)
        nodes = ret.relevant_nodes(
            kb,
            seeds,
            query_vector(kb, query),
            hops,
            k,
            max_facts,
            fact_qv=fact_qv,
            text_edges=text_edges,
            scoring=scoring,
        )
        if chain:
            nodes = with_chain_ends(
                kb,
                nodes,
                seeds,
                [tuple(c) for c in chain],
                k,
                max_facts,
                fact_qv,
                text_edges,
                scoring,
                text_steps if has_passages(kb) else None,
            )
        return (nodes, seeds), {"seeds": seeds[:10], "nodes": _nodes_view(nodes)}

    return run


def _nodes_adopt(kb: Any, output: Any, call: StepCall) -> list[dict]:
    nodes = []
    for item in listed(output, call):
        if isinstance(item, Mapping) and "facts" in item:
            if not item.get("id") or not isinstance(item["facts"], list | tuple):
                raise call.error(f"returned a node {str(item)[:60]!r}")
            nid, name, facts, prior = (
                str(item["id"]),
                str(item.get("name") or item["id"]),
                [str(f) for f in item["facts"]],
                score_of(item, call, "prior"),
            )
        else:
            p = passage(item, call)
            nid, facts, prior = p["entity_id"] or p["id"], [p["text"]], p["score"]
            name = p["name"] or kb.name(nid)
        nodes.append({"id": nid, "name": name, "facts": facts, "links": {}, "hop": 0, "prior": prior, "path": 0.0})
    return nodes[: call.args.get("k", len(nodes))]


def _web_default(kb: Any):
    def run(
        question: str,
        web: list[dict],
        k: int,
        entities: list[str] | None = None,
        max_facts: int = 10,
        *,
        model: Any = None,
        method: str = "json_schema",
    ) -> tuple[tuple, dict]:
        triples, calls, note = wg.extract(model, web, method, entities or [])
        nodes = wg.web_nodes(kb, triples, entities or [], query_vector(kb, question), k, max_facts)
        return (nodes, len(triples), calls, note), {"triples": len(triples), "note": note, "nodes": _nodes_view(nodes)}

    return run


STEPS: dict[str, Step] = {
    s.name: s
    for s in [
        Step(
            "vector_retrieval",
            "The vector branch: the texts nearest the query in the local corpus, or the web "
            "results on the web route (the local corpus when the web is unavailable).",
            VectorArgs,
            PASSAGES,
            _vector_default,
            _vector_adopt,
        ),
        Step(
            "graph_retrieval",
            "The graph branch on the local route: the KB graph walked from the query's linked "
            "entities, each node with its facts most relevant to the question.",
            GraphArgs,
            NODES,
            _graph_default,
            lambda kb, out, call: (_nodes_adopt(kb, out, call), []),
        ),
        Step(
            "web_graph_retrieval",
            "The graph branch on the web route: a graph of the triples extracted from the "
            "web results, each node with its facts most relevant to the question.",
            WebGraphArgs,
            NODES,
            _web_default,
            lambda kb, out, call: (_nodes_adopt(kb, out, call), 0, {}, None),
        ),
    ]
}


def step(ctx: Any, kb: Any, name: str, args: dict, extra: dict | None = None) -> Any:
    """Run one SSRAG retrieval step as a tool call (the user's tool when the context names it)."""
    return run_step("ssrag", STEPS, name, args, kb, ctx.tools, extra)
