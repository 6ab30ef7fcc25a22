"""Per-question callers of every retrieval module, with the decisions an LLM would make taken from gold.

Each caller does what the method's LangGraph node does (same function, the context's default
settings), with the LLM's output replaced by the gold annotation of the MetaQA question
(:func:`evals.oracle.gold.record_for`): topic entity (renamed to the question's copy), relation
path, entity types, skyline. The query embedding is included wherever the module embeds.
Written here because ``evals/bench_modules.py`` did not exist when this benchmark was written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evals.oracle.gold import GoldRecord
from evals.scale.synth import copy_name


@dataclass(frozen=True)
class Case:
    """One question asked about one copy: text, gold record, topic id in that copy."""

    question: str
    rec: GoldRecord
    topic: str

    @property
    def relations(self) -> list[str]:
        return list(self.rec.relations)


def callers(kb, kb_dir: Path) -> dict[str, Callable[[Case], object]]:
    """Module name → a function of one case, bound to ``kb`` (opened through :func:`kb.base.open_kb`)."""
    from agents.hybgrag.paths import base_hops, path_retrieve
    from agents.hydrarag import analysis, kg
    from agents.hydrarag.steps import _beam_documents
    from agents.mor import traversal as trav
    from agents.mor.graph_first import topic_entities
    from agents.ssrag import retrieval as sret
    from agents.ssrag.vectors import query_vector
    from graphs import context_for, get_graph

    fusion, f_ctx = get_graph("fusion"), context_for("fusion", kb=str(kb_dir))
    h_ctx, m_ctx = context_for("hybgrag", kb=str(kb_dir)), context_for("mor", kb=str(kb_dir))
    y_ctx, s_ctx = context_for("hydrarag", kb=str(kb_dir)), context_for("ssrag", kb=str(kb_dir))

    def hybgrag(c: Case):
        return path_retrieve(kb, c.question, [c.topic], c.relations, base_hops(c.relations, 1),
                             h_ctx.top_k, h_ctx.text_hops)

    def mor(c: Case):
        route = {"nodes": [{"type": c.rec.types[0], "restriction": kb.name(c.topic)}]
                 + [{"type": t, "restriction": ""} for t in c.rec.types[1:]],
                 "relations": [[r] for r in c.relations]}
        return trav.traverse_route(kb, c.question, route, seed_k=m_ctx.seed_k, layer_k=m_ctx.layer_k,
                                   matcher=m_ctx.text_matcher, max_frontier=m_ctx.max_frontier,
                                   layer_match=m_ctx.layer_match, text_edges=m_ctx.text_edges,
                                   mention_rows=m_ctx.num_candidates,
                                   topic_rule=lambda seeds: topic_entities(kb, route, seeds))

    def hydrarag(c: Case):
        name = kb.name(c.topic)
        chain = analysis.chain([{"id": c.topic, "name": name}], c.rec.skyline().replace(c.rec.topic, name, 1),
                               c.question, [])
        probe = analysis.probe("initial", 0, ["kg"], c.rec.hops, [chain])
        return kg.explore_kg(kb, c.question, probe, [f"id:{c.topic}"], y_ctx.pruning(), y_ctx.variant,
                             _beam_documents(kb, y_ctx, probe), y_ctx.beam_text)

    def ssrag(c: Case):
        seeds = sret.seed_entities(kb, c.question, [{"name": kb.name(c.topic)}], s_ctx.link_min_score)
        qv = query_vector(kb, c.question)
        return sret.relevant_nodes(kb, seeds, qv, s_ctx.graph_hops, s_ctx.graph_k, s_ctx.max_node_facts,
                                   fact_qv=qv, text_edges=s_ctx.text_edges, scoring=s_ctx.fact_scoring)

    return {
        "query embedding (floor)": lambda c: kb.embed(c.question),
        "dense search (k=10)": lambda c: kb.dense_search(c.question, 10),
        "BM25 search (k=10)": lambda c: kb.lexical_search(c.question, 10),
        "fusion end-to-end (graph.invoke)": lambda c: fusion.invoke({"question": c.question}, context=f_ctx),
        "HybGRAG hybrid module (gold path)": hybgrag,
        "MoR traversal (gold route)": mor,
        "HydraRAG KG path search (gold skyline)": hydrarag,
        "SSRAG graph branch (gold topic)": ssrag,
        "graph: neighbours of topic": lambda c: kb.graph.neighbors([c.topic]),
        "graph: ego graph (gold hops, relations)": lambda c: kb.graph.ego_graph(
            [c.topic], radius=c.rec.hops, relations=list(dict.fromkeys(c.relations))),
    }


def cases(datasets: Path, per_hop: int, factor: int, seed: int = 0) -> list[Case]:
    """``per_hop`` dev questions of each hop count (seeded sample), each about a random copy of its topic."""
    from evals.datasets import load_metaqa, sample
    from evals.oracle.gold import record_for
    from evals.scale.synth import random_copies

    out: list[Case] = []
    for hops in (1, 2, 3):
        qs = sample(load_metaqa(datasets / "metaqa" / f"dev_{hops}hop.txt"), per_hop, seed=seed)
        for q, c in zip(qs, random_copies(len(qs), factor, seed + hops), strict=True):
            topic = copy_name(q.topic, c)
            text = q.question.replace(q.topic, topic, 1)
            out.append(Case(text, record_for(q), topic))
    return out
