"""HybGRAG: a router over a retriever bank, refined by a validator/commentor critic loop.

route_question → retrieve_text | retrieve_hybrid → validate_retrieval → accept: END (or
generate_answer in QA mode); reject: comment_on_routing → route_question, at most
``max_iterations`` times, after which the last retrieval is returned. LLM calls per
iteration: router 1, validator 0-1 (none when the ``judge`` setting decides by rule: always under
``judge="rules"``, for small local models under the default ``"auto"``), commentor 0-1 (none
after the last iteration, whose feedback would go unused, and none when ``commentor="rules"``
or the judge's rules decide it); at most 3.
The hybrid module follows the router's relation path (:mod:`agents.hybgrag.paths`) unless
``radius`` fixes the paper's ego-graph radius. Settings: :mod:`agents.hybgrag.context`.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hybridrag.agents.hybgrag import critic as critic
from hybridrag.agents.hybgrag import roles as roles
from hybridrag.agents.hybgrag.context import HybGRAGContext
from hybridrag.agents.hybgrag.paths import action_key, next_hops
from hybridrag.agents.hybgrag.report import (
    evidence_of,
    first_answer,
    format_references,
    own_last,
    reference_dicts,
    render_trace,  # noqa: F401  (re-exported for callers of the graph)
)
from hybridrag.agents.hybgrag.retrieval import Retrieval, link_action, text_retrieve
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.agents.hybgrag.tools import STEPS
from hybridrag.agents.llm.constrained import is_llama_cpp
from hybridrag.agents.llm.judge import few_shot_count
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.graphs.runtime import InputState, OutputState, context_of, resolve_kb, timed, traced
from hybridrag.tools.steps import run_step
from hybridrag.tools.text_hops import has_passages

ModuleRoute = Literal["hybrid", "text"]
ValidationRoute = Literal[
    "accepted or out of iterations", "accepted: answer (QA mode)", "rejected: corrective feedback"
]
FeedbackRoute = Literal["feedback to the router"]
ROUTING_ROUTES: dict[ModuleRoute, str] = {"hybrid": "retrieve_hybrid", "text": "retrieve_text"}  # drawn labels
VALIDATION_ROUTES: dict[ValidationRoute, str] = {
    "accepted or out of iterations": END,
    "accepted: answer (QA mode)": "generate_answer",
    "rejected: corrective feedback": "comment_on_routing",
}
FEEDBACK_ROUTES: dict[FeedbackRoute, str] = {"feedback to the router": "route_question"}


class State(InputState, OutputState, total=False):
    """Full HybGRAG state: the question, the loop's working values and the common output."""

    iteration: int
    router_messages: list[dict]
    action: dict
    retrieval: dict
    references: list[dict]
    verdict: str
    feedback: str


def _setup(runtime: Runtime[HybGRAGContext], role: str) -> tuple[HybGRAGContext, Any, Any]:
    """Context, KB and the chat model of ``role`` (its own spec, else ``llm``)."""
    ctx = context_of(runtime, HybGRAGContext)
    return ctx, resolve_kb(ctx), load_chat_model(getattr(ctx, f"{role}_llm") or ctx.llm, ctx.llm_base_url)


def route_question(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Router: extract topic entities and useful relations, choose a module, link entities."""
    ctx, kb, model = _setup(runtime, "router")
    t, usage, shown = state.get("iteration", 0) + 1, {}, None
    if t == 1:
        n = few_shot_count(ctx.num_few_shot, ctx.small_model_few_shot, ctx.llm)
        shots = examples_for(kb, "router", state["question"], ctx.examples, n, ctx.few_shot)
        messages = roles.router_first_messages(state["question"], kb.graph.schema(), shots)
        shown = [ex["question"] for ex in shots]
    else:
        messages = roles.router_reflect_messages(
            state["router_messages"], state["action"], state["feedback"], state["question"]
        )
    with timed("router", usage):
        choices = roles.router_choices(kb.graph.schema(), state["question"]) if is_llama_cpp(model) else None
        reply, calls = roles.route(model, messages, ctx.structured_method, choices)
        fallback = None
        if reply is None:  # the paper's fallback: plain text retrieval
            reply, fallback = roles.RouterAction(module="text"), "unparseable router output: text module"
        action = link_action(kb, roles.check_action(reply, kb.graph.schema()))
    # a path to follow: the graph's relations, or (text-only KB) the router's phrases through passages
    action["walkable"] = bool(kb.graph.schema().relation_types) or bool(
        action["relations"] and ctx.text_hops and ctx.radius == 0 and has_passages(kb)
    )
    if action["module"] == "hybrid" and not (action["linked"] and action["walkable"]):
        fallback = fallback or ("no topic entity linked" if action["walkable"] else "no relation to follow") + ": text"
    step = traced(
        "route_question",
        action["module"],
        iteration=t,
        module=action["module"],
        entities=[f"{e['name']} ({e['type'] or 'unknown'})" for e in action["entities"]],
        relations=action["relations"],
        linked=[e["id"] for e in action["linked"]],
        unlinked=action["unlinked"],
        dropped=action["dropped_relations"] + action["dropped_types"],
        fallback=fallback,
        examples=shown,
    )
    return {"iteration": t, "router_messages": messages, "action": action, "trace": [step], "usage": {**calls, **usage}}


def route_after_routing(state: State) -> ModuleRoute:
    """Hybrid module when chosen, a topic entity linked and a path to follow, else text."""
    a = state["action"]
    return "hybrid" if a["module"] == "hybrid" and a["linked"] and a.get("walkable", True) else "text"


def own_entities(state: State) -> set[str]:
    """The question's own entities: the ids the router linked (never an answer)."""
    return {e["id"] for e in state.get("action", {}).get("linked", [])}


def _outputs(kb: Any, res: Retrieval, t: int, own: set[str], **extra: Any) -> dict:
    refs = own_last(reference_dicts(kb, res.references), own)
    facts = {
        "module": res.module,
        "intersection": res.intersection,
        "ego_sizes": res.ego_sizes,
        "unused_relations": res.unused_relations,
        **extra,
    }
    step = traced(
        f"retrieve_{res.module}",
        f"{len(refs)} references",
        iteration=t,
        top=[r["id"] for r in refs[:5]],
        ego_sizes=res.ego_sizes,
        intersection=res.intersection,
        hops=extra.get("hops"),
    )
    return {
        "references": refs,
        "retrieval": facts,
        "evidence": evidence_of(refs),
        "trace": [step],
        "ranked": [{k: r[k] for k in ("id", "kind", "name", "score", "source")} for r in refs],
        "answer": first_answer(refs, own),
    }


def retrieve_text(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Text module: vector similarity between the question and every text."""
    ctx = context_of(runtime, HybGRAGContext)
    kb, usage = resolve_kb(ctx), {}
    with timed("text_module", usage):
        res = text_retrieve(
            kb,
            state["question"],
            ctx.top_k,
            search=lambda query, k: run_step("hybgrag", STEPS, "dense_search", {"query": query, "k": k}, kb, ctx.tools),
        )
        out = _outputs(kb, res, state["iteration"], own_entities(state))
    return {**out, "usage": usage}


def retrieve_hybrid(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Hybrid module: along the router's relation path (radius 0), or the paper's ego-graphs
    of radius ``radius``; intersection; VSS ranking of the candidates.
    """
    ctx = context_of(runtime, HybGRAGContext)
    kb, usage, action = resolve_kb(ctx), {}, state["action"]
    with timed("hybrid_module", usage):
        ids, rels = list(dict.fromkeys(e["id"] for e in action["linked"])), action["relations"]
        args = {"question": state["question"], "entities": ids, "relations": rels, "k": ctx.top_k}
        if ctx.radius > 0:  # the paper's fixed radius
            res = run_step("hybgrag", STEPS, "hybrid_retrieve", {**args, "hops": ctx.radius}, kb, ctx.tools)
            out = _outputs(kb, res, state["iteration"], set(ids), hops=ctx.radius)
        else:
            key = action_key(ids, rels)
            hops = next_hops(state.get("retrieval"), key, rels, len(ids))
            res = run_step(
                "hybgrag",
                STEPS,
                "hybrid_retrieve",
                {**args, "hops": hops, "along_path": True, "text_hops": ctx.text_hops},
                kb,
                ctx.tools,
            )
            out = _outputs(kb, res, state["iteration"], set(ids), hops=hops, key=key)
    if not out["references"] and state["iteration"] >= ctx.max_iterations:
        # the loop's last retrieval found nothing: end with the text module's references, not none
        from hybridrag.graphs.runtime import merge_usage

        text = retrieve_text(state, runtime)
        note = traced(
            "retrieve_hybrid",
            "nothing on the last iteration: the text module's references",
            iteration=state["iteration"],
        )
        return {**text, "trace": out["trace"] + [note] + text["trace"], "usage": merge_usage(usage, text["usage"])}
    return {**out, "usage": usage}


def validate_retrieval(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Validator: accept or reject the top references (an empty retrieval is rejected unasked)."""
    ctx, kb, model = _setup(runtime, "validator")
    refs, usage, calls = state.get("references", [])[: ctx.num_references], {}, {}
    reasoning, verdict, shots = "nothing was retrieved", "no", []
    if refs:
        with timed("validator", usage):  # the LLM, or (judge setting) the rule over the retrieval
            verdict, reasoning, shots, calls = critic.judge_retrieval(kb, ctx, model, state, refs)
    decision = "accept" if verdict == "yes" else "reject"
    step = traced(
        "validate_retrieval",
        decision,
        iteration=state["iteration"],
        reasoning=reasoning,
        examples=[f"{ex['question']} → {ex['name']}: {ex['verdict']}" for ex in shots],
    )
    return {"verdict": verdict, "trace": [step], "usage": {**calls, **usage}}


def route_after_validation(state: State, runtime: Runtime[HybGRAGContext]) -> ValidationRoute:
    """Accept, or out of iterations: finish (answer first in QA mode); otherwise ask the commentor."""
    ctx = context_of(runtime, HybGRAGContext)
    if state["verdict"] == "yes" or state["iteration"] >= ctx.max_iterations:
        return "accepted: answer (QA mode)" if ctx.answer else "accepted or out of iterations"
    return "rejected: corrective feedback"


def route_after_comment(state: State) -> FeedbackRoute:
    """The commentor's feedback always goes back to the router (the corrective edge)."""
    return "feedback to the router"


def comment_on_routing(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Commentor: the LLM's corrective feedback, or (``commentor="rules"``) rules where they apply."""
    ctx, kb, model = _setup(runtime, "commentor")
    action, usage, calls, bank = state["action"], {}, {}, []
    with timed("commentor", usage):
        diagnosis = critic.rule_diagnosis(ctx, action, state["retrieval"])
        if diagnosis is None:
            bank = examples_for(kb, "commentor", state["question"], ctx.examples, ctx.num_experiences, ctx.experience)
            reply, calls = roles.comment(model, state["question"], action, bank, ctx.structured_method)
            diagnosis = critic.from_critique(reply, action)
            if diagnosis.source == "fallback":  # unusable reply: what the retrieval shows, if anything
                diagnosis = critic.fallback_from_rules(action, state["retrieval"]) or diagnosis
    step = traced(
        "comment_on_routing",
        "+".join(diagnosis.error_types),
        iteration=state["iteration"],
        feedback=diagnosis.feedback,
        source=diagnosis.source,
        reasoning=diagnosis.reasoning,
        items=[[etype, list(names)] for etype, names in diagnosis.items],
        examples=[f"{ex['question']} → {ex['error_type']}" for ex in bank],
    )
    return {"feedback": diagnosis.feedback, "trace": [step], "usage": {**calls, **usage}}


def generate_answer(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """QA mode: answer from the final references (the top reference's name if unparseable)."""
    ctx, _, model = _setup(runtime, "answer")
    refs, usage = state.get("references", [])[: max(ctx.num_references, 3)], {}
    with timed("answerer", usage):
        reply, calls = roles.answer(model, state["question"], format_references(refs), ctx.structured_method)
    text = reply.answer if reply else first_answer(refs, own_entities(state))
    step = traced("generate_answer", roles.answer_decision(reply, calls), answer=text)
    return {"answer": text, "trace": [step], "usage": {**calls, **usage}}


builder = StateGraph(State, context_schema=HybGRAGContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(route_question)
builder.add_node(retrieve_text)
builder.add_node(retrieve_hybrid)
builder.add_node(validate_retrieval)
builder.add_node(comment_on_routing)
builder.add_node(generate_answer)
builder.add_edge(START, "route_question")  # every question starts at the router
builder.add_conditional_edges("route_question", route_after_routing, ROUTING_ROUTES)  # module choice
builder.add_edge("retrieve_text", "validate_retrieval")  # every retrieval is validated
builder.add_edge("retrieve_hybrid", "validate_retrieval")
builder.add_conditional_edges(  # accept / out of iterations → end, reject → commentor
    "validate_retrieval", route_after_validation, VALIDATION_ROUTES
)
builder.add_conditional_edges("comment_on_routing", route_after_comment, FEEDBACK_ROUTES)  # the corrective edge
builder.add_edge("generate_answer", END)  # QA mode ends with the answer

graph = builder.compile(name="hybgrag")
