"""SSRAG: query augmentation, agentic routing, and vector ∥ graph retrieval unified in one rerank.

decompose_query → extract_entities → detect_intent → enhance_query (Algorithm 1) →
route_query (Algorithm 2: TEMPORAL → web, FACTUAL → local corpus, nothing local → web) →
retrieve_vectors ∥ retrieve_graph (local route: the KB graph walked from the linked entities; web
route: the vector branch fetches first, then ``retrieve_web_graph`` reads triples extracted from
those results, or ``retrieve_graph`` when the web was unavailable) → convert_graph_to_text → rerank_jointly (top 2k) →
deduplicate_contexts (exact, cosine, LLM filter; top k) (Algorithm 3) → generate_answer.
Corrective edges (ours; ``max_iterations=1`` is the paper's single pass, see
:mod:`agents.ssrag.correct`): the entity check re-asks the extractor, the route check the
router, and a failed answer (``verify_answer``) re-runs the run from the entities, each with
the reason in the next prompt. State and context: :mod:`graphs.ssrag_state`; the query-side
nodes (Algorithms 1 and 2): :mod:`graphs.ssrag_query`; conditional edges and their drawn labels:
:mod:`graphs.ssrag_edges`. LLM calls per pass: 4 (augmentation) + 1
(router) + one per graph node + 1 (filter) + 1 (answer), each retried once on an unparseable reply; with a
small model (``judge``) most roles take rules and at most two calls are left (:mod:`graphs.ssrag_small`).
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from hybridrag.agents.llm.structured import add_usage
from hybridrag.agents.ssrag import correct as fix
from hybridrag.agents.ssrag import retrieval as ret
from hybridrag.agents.ssrag import shots
from hybridrag.agents.ssrag import unify as uni
from hybridrag.agents.ssrag.chain import chain_text, example_chain
from hybridrag.agents.ssrag.tools import step
from hybridrag.agents.ssrag.vectors import query_vector
from hybridrag.graphs.runtime import InputState, OutputState, resolve_kb, timed, traced
from hybridrag.graphs.ssrag_edges import (
    AFTER_DEDUP,
    AFTER_VERIFY,
    ENTITIES,
    ROUTES,
    WEB_GRAPH,
    after_entities,
    after_vectors,
    after_verify,
    branches,
    route_after_dedup,
)
from hybridrag.graphs.ssrag_query import decompose_query, detect_intent, enhance_query, extract_entities, route_query
from hybridrag.graphs.ssrag_small import constrained, rule_answer, small
from hybridrag.graphs.ssrag_state import SSRAGContext, State, _asked, _ctx, _nodes, _out, _setup

__all__ = ["SSRAGContext", "State", "builder", "graph"]


def retrieve_vectors(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Vector branch: FAISS over the local corpus, or web snippets (local when the web is unavailable)."""
    ctx = _ctx(runtime)
    usage: dict = {}
    with timed("vector_retrieval", usage):
        items, used, note = step(
            ctx,
            resolve_kb(ctx),
            "vector_retrieval",
            {"query": state["query"], "k": ctx.vector_k, "source": state["source"], "web_k": ctx.web_k},
        )
    return {
        "vector": items,
        "vector_source": used,
        **_out(
            "retrieve_vectors",
            f"{len(items)} texts from {used}",
            usage,
            {},
            note,
            source=used,
            top=[i["id"] for i in items[:5]],
        ),
    }


def retrieve_graph(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Graph branch, local corpus: the KB graph walked from the query's linked entities."""
    ctx, kb, _ = _setup(runtime)
    usage: dict = {}
    chain = (
        example_chain(shots.nearest(kb, state["question"], ctx.n_examples, ctx.examples))
        if ctx.chain_walk and small(ctx)
        else []
    )
    with timed("graph_retrieval", usage):
        nodes, seeds = step(
            ctx,
            kb,
            "graph_retrieval",
            {
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
            },
        )
    ends = [n["id"] for n in nodes if n.get("chain")]
    extra = {"chain": chain_text(chain), "chain_ends": ends[:10]} if chain else {}
    return {
        "nodes": nodes,
        **_out(
            "retrieve_graph",
            f"{len(nodes)} nodes from {len(seeds)} seeds"
            + (f", {len(ends)} at the example's chain end" if chain else ""),
            usage,
            {},
            None,
            source="local",
            seeds=seeds[:10],
            nodes=[n["id"] for n in nodes],
            **extra,
        ),
    }


def retrieve_web_graph(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Graph branch, web route: a graph of the triples extracted from the web results."""
    ctx, kb, model = _setup(runtime)
    usage: dict = {}
    with timed("graph_retrieval", usage):
        web = [i for i in state.get("vector", []) if i["source"] == "web"]
        nodes, triples, calls, note = step(
            ctx,
            kb,
            "web_graph_retrieval",
            {
                "question": state["question"],
                "entities": [e["name"] for e in state["entities"]],
                "web": web,
                "k": ctx.graph_k,
                "max_facts": ctx.max_node_facts,
            },
            {"model": model if ctx.graph_to_text == "llm" else None, "method": ctx.structured_method},
        )
    return {
        "nodes": nodes,
        **_out(
            "retrieve_web_graph",
            f"{len(nodes)} nodes from {triples} web triples",
            usage,
            calls,
            note,
            source="web",
            nodes=[n["id"] for n in nodes],
        ),
    }


def convert_graph_to_text(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """LLM_Convert: each node and its relations as prose (facts as sentences on fallback)."""
    ctx, _, model = _setup(runtime)
    items, calls, notes = [], {}, []
    usage: dict = {}
    with timed("graph_to_text", usage):
        nodes = state.get("nodes", [])
        by_relevance = sorted(range(len(nodes)), key=lambda i: (nodes[i].get("hop", 0), -(nodes[i].get("prior") or 0)))
        converted = set(by_relevance[: ctx.llm_nodes]) if ctx.graph_to_text == "llm" and not small(ctx) else set()
        for i, node in enumerate(nodes):
            text, used, note = ret.node_to_text(model if i in converted else None, node, ctx.structured_method)
            calls = add_usage(calls, used)
            items.append(ret.graph_item(node, text))
            notes += [f"{node['id']}: {note}"] if note else []
    made = "template" if small(ctx) else ctx.graph_to_text
    return {
        "graph": items,
        **_out("convert_graph_to_text", f"{len(items)} graph texts ({made})", usage, calls, "; ".join(notes) or None),
    }


def rerank_jointly(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Joint rerank: vector and graph texts by cosine to Qv, top 2k."""
    ctx = _ctx(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    with timed("rerank", usage):
        qv = query_vector(kb, state["query"] if ctx.rerank_query == "augmented" else state["question"])
        items = state.get("vector", []) + state.get("graph", [])
        scores = uni.item_scores(kb, items, qv, _nodes(state), ctx.graph_vectors, ctx.fact_scoring)
        pool = uni.joint_rerank(kb, items, qv, 2 * ctx.top_k, ctx.bare_contexts_last, scores)
    kg = sum(i["source"] == "kg" for i in pool)
    decision = f"top {len(pool)}: {kg} graph, {len(pool) - kg} text"
    return {"pool": pool, **_out("rerank_jointly", decision, usage, {}, None)}


def deduplicate_contexts(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """TextDedup (exact, cosine tie-break, LLM filter), then the top k as the unified context."""
    ctx, kb, model = _setup(runtime)
    calls, note = {}, None
    usage: dict = {}
    with timed("dedup", usage):
        pool = state.get("pool", [])
        vecs = uni.item_vectors(kb, pool, _nodes(state), ctx.graph_vectors, ctx.fact_scoring)
        kept, removed = uni.text_dedup(kb, pool, ctx.dedup_threshold, vecs)
        if ctx.llm_dedup and not small(ctx):
            kept, dropped, calls, note = uni.llm_filter(
                model, state["query"], kept, ctx.structured_method, ctx.context_budget
            )
            removed += dropped
        top = kept[: ctx.top_k]
    asked = _asked(state)
    order = uni.candidates_first(top, asked)
    return {
        "context": top,
        "answer": uni.fallback_answer(order, asked),
        "ranked": [uni.as_ranked(i) for i in order],
        "evidence": [uni.as_evidence(i) for i in top],
        "answering": ctx.answer,
        **_out("deduplicate_contexts", f"kept {len(top)}, removed {len(removed)}", usage, calls, note, removed=removed),
    }


def generate_answer(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Answer generation over the unified context (the top context's name on fallback)."""
    ctx, kb, model = _setup(runtime)
    usage: dict = {}
    asked, own = _asked(state), [s for e in state.get("entities", []) for s in e.get("surfaces") or [e["name"]]]
    if small(ctx):  # the rule's answer is accepted as it is (no fallback note for the answer check)
        with timed("answer", usage):
            text, order, why = rule_answer(
                state.get("context", []),
                asked,
                shots.nearest(kb, state["question"], ctx.n_examples, ctx.examples),
                state.get("graph", []),
            )
        back = [uni.as_evidence(order[0])] if order and order[0] not in state.get("context", []) else []
        return {
            "answer": text,
            "answer_note": "",
            "ranked": [uni.as_ranked(i) for i in order],
            **({"evidence": back + state.get("evidence", [])} if back else {}),
            **_out("generate_answer", text, usage, {}, why),
        }
    with timed("answer", usage):
        text, calls, note = uni.generate(
            model,
            state["question"],
            state.get("context", []),
            ctx.structured_method,
            ctx.context_budget,
            own,
            constrained(ctx, model),
        )
        if note:  # the non-LLM answer: the best context that is not one of the question's entities
            text = uni.fallback_answer(uni.candidates_first(state.get("context", []), asked), asked)
    return {"answer": text, "answer_note": note or "", **_out("generate_answer", text, usage, calls, note)}


def verify_answer(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """The answer check: a failed answer sends the run back to the entities, with the reason."""
    ctx = _ctx(runtime)
    problem = fix.answer_problem(state.get("answer", ""), state.get("answer_note"), state["question"])
    rounds = state.get("answer_rounds", 0) + 1
    again = bool(problem) and rounds < ctx.max_iterations and state.get("entity_rounds", 0) < ctx.max_iterations
    found = [c["name"] for c in state.get("context", [])]
    feedback = fix.answer_feedback(state.get("entities", []), problem, found) if again else ""
    decision = "accepted" if not problem else f"re-augment: {problem}" if again else f"kept: {problem}"
    return {
        "answer_rounds": rounds,
        "feedback": feedback,
        "trace": [traced("verify_answer", decision, fallback=None, round=rounds)],
    }


builder = StateGraph(State, context_schema=SSRAGContext, input_schema=InputState, output_schema=OutputState)
for _node in (
    decompose_query,
    extract_entities,
    detect_intent,
    enhance_query,
    route_query,
    retrieve_vectors,
    retrieve_graph,
    retrieve_web_graph,
    convert_graph_to_text,
    rerank_jointly,
    deduplicate_contexts,
    generate_answer,
    verify_answer,
):
    builder.add_node(_node)
builder.add_edge(START, "decompose_query")  # Algorithm 1 starts by decomposing the question
builder.add_edge("decompose_query", "extract_entities")  # entities come from the sub-questions
builder.add_conditional_edges("extract_entities", after_entities, ENTITIES)  # re-asked with the reason, or on
builder.add_edge("detect_intent", "enhance_query")  # the rewrite uses entities, time hints and intent
builder.add_edge("enhance_query", "route_query")  # Algorithm 2 routes the augmented query
builder.add_conditional_edges("route_query", branches, ROUTES)  # local: both branches in parallel; web: texts first
builder.add_conditional_edges("retrieve_vectors", after_vectors, WEB_GRAPH)  # web: the results' graph follows
builder.add_edge("retrieve_graph", "convert_graph_to_text")  # graph nodes become text
builder.add_edge("retrieve_web_graph", "convert_graph_to_text")
builder.add_edge(["retrieve_vectors", "convert_graph_to_text"], "rerank_jointly")  # ... and join here
builder.add_edge("rerank_jointly", "deduplicate_contexts")  # top 2k → dedup → top k
builder.add_conditional_edges("deduplicate_contexts", route_after_dedup, AFTER_DEDUP)  # or retrieval only
builder.add_edge("generate_answer", "verify_answer")
builder.add_conditional_edges("verify_answer", after_verify, AFTER_VERIFY)  # corrective: a failed answer re-augments

graph = builder.compile(name="ssrag")
