"""The retrieval modules of each method, fed the decisions a perfect LLM would give (no LLM call).

Used by :mod:`benchmarks.speed.modules` and :mod:`benchmarks.scale.modules`. Each
``prepare_<method>`` builds, untimed, what the LLM
steps before retrieval would have produced for a gold record (as :mod:`evals.oracle` derives
it: the topic entity, the relation path of the question type, the skyline; never the gold
answers), and returns the method's modules in pipeline order: ``(name, call)`` pairs where
``call()`` runs the module's retrieval functions exactly as the graph node does and returns a
JSON-ready summary of its result (the ids / texts in rank order), so two runs can be compared
for identical top-k. A module that needs an earlier module's result reads it from the shared
``state`` dict the earlier call filled.

Every call pays for its own query embedding: :func:`forget_queries` drops the question's
cached vectors before each call (the pipeline embeds a question once and shares it; the
bench charges it to every module, the worst case).
"""

from __future__ import annotations

from collections.abc import Callable

from hybridrag.agents.hybgrag import roles as hg_roles
from hybridrag.agents.hybgrag.paths import action_key, next_hops, path_retrieve
from hybridrag.agents.hybgrag.report import reference_dicts
from hybridrag.agents.hybgrag.retrieval import link_action, text_retrieve
from hybridrag.agents.hydrarag import analysis as hy_analysis
from hybridrag.agents.hydrarag import exploration as hy_exploration
from hybridrag.agents.hydrarag import kg as hy_kg
from hybridrag.agents.hydrarag import pruning as hy_pruning
from hybridrag.agents.hydrarag import text as hy_text
from hybridrag.agents.hydrarag.context import HydraRAGContext
from hybridrag.agents.mor import matching as mor_matching
from hybridrag.agents.mor import plan as mor_plan
from hybridrag.agents.mor import rerank as mor_rr
from hybridrag.agents.mor import traversal as mor_trav
from hybridrag.agents.mor.context import MoRContext
from hybridrag.agents.mor.critique import critique
from hybridrag.agents.mor.graph_first import select_graph_first, topic_entities
from hybridrag.agents.mor.organize import neural_scores
from hybridrag.agents.mor.output import outputs
from hybridrag.agents.ssrag import augment as ss_aug
from hybridrag.agents.ssrag import retrieval as ss_ret
from hybridrag.agents.ssrag import unify as ss_uni
from hybridrag.agents.ssrag import vectors as ss_vec
from hybridrag.agents.ssrag.context import SSRAGContext
from hybridrag.evals.oracle.gold import GoldRecord
from hybridrag.evals.oracle.hybgrag import gold_action
from hybridrag.evals.oracle.mor import gold_nodes
from hybridrag.graphs.hybgrag import HybGRAGContext
from hybridrag.kb.base import KnowledgeBase

Module = tuple[str, Callable[[], object]]
METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")


def forget_queries(texts: list[str]) -> None:
    """Drop the cached vectors of ``texts`` (question, query, skyline) from every method's cache."""
    with ss_vec._cache_lock:
        for key in [k for k in ss_vec._cache if k[1] in texts]:
            del ss_vec._cache[key]
    for key in [k for k in hy_pruning._VECTORS if k[1] in texts]:
        del hy_pruning._VECTORS[key]
    mor_matching.forget_questions(texts)


def prepare_hybgrag(kb: KnowledgeBase, rec: GoldRecord) -> list[Module]:
    """Text module and hybrid module (radius 0: along the gold relation path, the default).

    3-hop paths repeat a relation, so the first walk of the unique relations is one hop short and
    the loop deepens it: timed at the gold number of hops.
    """
    ctx, q = HybGRAGContext(), rec.question
    gold = gold_action(rec)
    reply = hg_roles.RouterAction(
        entities=[hg_roles.TopicEntity(name=n, type=t) for n, t in gold["entities"]],
        relations=gold["relations"],
        module="hybrid",
    )
    action = link_action(kb, hg_roles.check_action(reply, kb.graph.schema()))
    ids, rels = list(dict.fromkeys(e["id"] for e in action["linked"])), action["relations"]

    def text() -> list[str]:
        return [r["id"] for r in reference_dicts(kb, text_retrieve(kb, q, ctx.top_k).references)]

    def hybrid() -> list[str]:  # the walk the corrective loop reaches: one hop per relation of the gold path
        key = action_key(ids, rels)  # (a first walk of fewer hops finds nothing; the loop repeats it deeper)
        hops = max(next_hops(None, key, rels, len(ids)), rec.hops)
        res = path_retrieve(kb, q, ids, rels, hops, ctx.top_k, ctx.text_hops)
        return [r["id"] for r in reference_dicts(kb, res.references)]

    return [("text", text), ("hybrid", hybrid)] if ids else [("text", text)]


def prepare_mor(kb: KnowledgeBase, rec: GoldRecord) -> list[Module]:
    """Traversal (every route, then the intersection and candidate selection) and the rerank."""
    ctx, q, state = MoRContext(), rec.question, {}
    plan = mor_plan.Plan(routes=[mor_plan.PlanRoute(nodes=[mor_plan.PlanNode(**n) for n in gold_nodes(rec)])])
    checked = mor_plan.validate_plan(plan, kb.graph.schema(), ctx.targets(), ctx.max_hops)
    if not checked["valid"]:
        raise ValueError(f"{rec.id}: the gold plan does not validate on this KB: {checked['problems']}")

    def traversal() -> list[str]:
        results = [
            mor_trav.traverse_route(
                kb,
                q,
                route,
                seed_k=ctx.seed_k,
                layer_k=ctx.layer_k,
                matcher=ctx.text_matcher,
                max_frontier=ctx.max_frontier,
                layer_match=ctx.layer_match,
                structure=True,
                text_edges=ctx.text_edges,
                mention_rows=ctx.num_candidates,
                topic_rule=lambda seeds, r=route: topic_entities(kb, r, seeds),
            )
            for route in checked["routes"]
        ]
        pool, mode = mor_trav.merge_routes(results)
        topics = {t for r in results for t in r.get("topics", [])}
        pool = {e: t for e, t in pool.items() if e not in topics}
        qvec, missing = mor_matching.question_vector(kb, q), ctx.top_k - len(pool)
        cands = select_graph_first(kb, qvec, pool, ctx.num_candidates)
        fill = mor_trav.fillers(kb, q, qvec, set(pool) | topics, [checked["target"]], missing, ctx.text_matcher)
        critique(kb, checked, results, mode, True)
        state.update(candidates=cands + fill, topics=sorted(topics))
        return [c["id"] for c in cands + fill]

    def rerank() -> list[str]:
        cands = state["candidates"]
        scores, used = neural_scores(ctx.reranker, ctx.reranker_weights, ctx.fingerprint_length, kb, cands)
        linear = used.startswith("structure")
        weights = (
            mor_rr.load_weights("" if ctx.reranker == "neural" else ctx.reranker_weights, ctx.fingerprint_length)
            if linear
            else {"semantic": 1.0}
        )
        groups = mor_rr.parse_groups(ctx.reranker_features) if linear or scores is not None else ("tf",)
        top = mor_rr.rerank(cands, weights, ctx.fingerprint_length, groups, scores)[: ctx.top_k]
        return [r["id"] for r in outputs(kb, q, top, state["topics"])["ranked"]]

    return [("traversal", traversal), ("rerank", rerank)]


def prepare_hydrarag(kb: KnowledgeBase, rec: GoldRecord) -> list[Module]:
    """KG exploration, document exploration and pruning.

    KG exploration is the beam path search with its cross-score, and the question subgraph's seeds;
    document exploration the sentence retrieval (paths built by the no-LLM sentence fallback).
    """
    ctx, q, state = HydraRAGContext(), rec.question, {}
    found = hy_analysis.detect_sources(kb, [rec.topic], ctx.link_threshold, False)
    skyline = rec.skyline()
    topics = hy_analysis.reorder(found["topics"], skyline)
    sources = [s for s in rec.sources if s in found["available"]] or found["available"]
    chain = hy_analysis.chain(topics, skyline, q, found["doc_topics"])
    probe = hy_analysis.probe(
        "initial", 1, sources, max(1, min(rec.hops, ctx.max_depth)), [chain], floor=ctx.length_floor
    )
    s = ctx.pruning()
    modules: list[Module] = []

    def explore_kg() -> list[str]:
        cands, _ = hy_kg.explore_kg(
            kb,
            q,
            probe,
            found["topic_keys"],
            s,
            ctx.variant,
            hy_exploration.beam_documents(kb, ctx, probe),
            ctx.beam_text,
        )
        topic_ids = list(dict.fromkeys(t for ch in probe["chains"] for t in ch["topics"]))
        state["subgraph"] = topic_ids  # E_q's seeds (agents/hydrarag/exploration.py)
        state.setdefault("cands", []).extend(cands)
        return [c["text"] for c in cands]

    def explore_docs() -> list[str]:
        t = ctx.text()
        sents = hy_text._select_sentences(
            kb,
            probe["chains"],
            lambda ch: hy_text.gather_docs(kb, ch["doc_topics"], ch["query"], t.doc_pool),
            t.num_sentences,
        )
        cands, _ = hy_text.to_candidates(kb, None, sents, "doc", probe["phase"], t.link_threshold)
        state.setdefault("cands", []).extend(cands)
        return [c["text"] for c in cands]

    def prune() -> list[str]:
        cands = state.get("cands", [])
        inside = hy_kg.candidate_members(kb, state.get("subgraph", []), ctx.max_depth, cands)
        pool = hy_pruning.rank_candidates(kb, cands, skyline, found["topic_keys"], inside, s)
        hy_pruning.to_ranked(kb, pool, {t["id"] for t in topics}, ctx.top_k)
        return [c["text"] for c in pool]

    if "kg" in sources:
        modules.append(("explore_kg", explore_kg))
    if "docs" in sources:
        modules.append(("explore_docs", explore_docs))
    return [*modules, ("prune", prune)]


def prepare_ssrag(kb: KnowledgeBase, rec: GoldRecord) -> list[Module]:
    """Vector branch, graph branch (local route), joint rerank and the dedup (no LLM filter)."""
    ctx, q, state = SSRAGContext(), rec.question, {}
    entities = ss_aug.canonicalise(kb, [{"name": rec.topic, "type": rec.topic_type}])

    def vector() -> list[str]:
        items, _, _ = ss_ret.vector_branch(kb, q, "local", ctx.vector_k, ctx.web_k)
        state["vector"] = items
        return [i["id"] for i in items]

    def graph() -> list[list]:
        seeds = ss_ret.seed_entities(kb, q, entities, ctx.link_min_score)
        nodes = ss_ret.relevant_nodes(
            kb,
            seeds,
            ss_vec.query_vector(kb, q),
            ctx.graph_hops,
            ctx.graph_k,
            ctx.max_node_facts,
            fact_qv=ss_vec.query_vector(kb, q),
            text_edges=ctx.text_edges,
            scoring=ctx.fact_scoring,
        )
        state["nodes"] = {n["id"]: n for n in nodes}
        state["graph"] = [ss_ret.graph_item(n, ss_ret.template_text(n)) for n in nodes]
        return [[n["id"], n["facts"]] for n in nodes]

    def rerank() -> list[str]:
        qv = ss_vec.query_vector(kb, q)
        items = state["vector"] + state["graph"]
        scores = ss_uni.item_scores(kb, items, qv, state["nodes"], ctx.graph_vectors, ctx.fact_scoring)
        state["pool"] = ss_uni.joint_rerank(kb, items, qv, 2 * ctx.top_k, ctx.bare_contexts_last, scores)
        return [i["id"] for i in state["pool"]]

    def dedup() -> list[str]:
        vecs = ss_uni.item_vectors(kb, state["pool"], state["nodes"], ctx.graph_vectors, ctx.fact_scoring)
        kept, _ = ss_uni.text_dedup(kb, state["pool"], ctx.dedup_threshold, vecs)
        return [i["id"] for i in kept[: ctx.top_k]]

    return [("vector", vector), ("graph", graph), ("rerank", rerank), ("dedup", dedup)]


PREPARE = {"hybgrag": prepare_hybgrag, "mor": prepare_mor, "hydrarag": prepare_hydrarag, "ssrag": prepare_ssrag}
