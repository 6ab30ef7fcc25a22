"""HybGRAG: a router over a retriever bank, refined by a validator/commentor critic loop.

route_question → retrieve_text | retrieve_hybrid → validate_retrieval → accept: END (or
generate_answer in QA mode); reject: comment_on_routing → route_question, at most
``max_iterations`` times, after which the last retrieval is returned. LLM calls per iteration:
router 1, validator 0-1, commentor 0-1 (none where the ``judge`` or ``commentor`` setting lets a
rule decide, and no commentor after the last iteration). The roles, the retrieval and the rules
live in :mod:`agents.hybgrag`; its settings are :class:`HybGRAGContext`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hybridrag.agents.hybgrag import critic, roles, router, validator
from hybridrag.agents.hybgrag.context import HybGRAGContext
from hybridrag.agents.hybgrag.paths import hybrid_request
from hybridrag.agents.hybgrag.report import (
    answer_references,
    format_references,
    own_ids,
    reply_or_first,
    retrieval_outputs,
)
from hybridrag.agents.hybgrag.report import render_trace as render_trace  # the CLI prints the refinement path
from hybridrag.agents.hybgrag.retrieval import text_retrieve
from hybridrag.agents.hybgrag.tools import STEPS
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.graphs.runtime import (
    InputState,
    OutputState,
    context_of,
    merge_usage,
    resolve_kb,
    timed,
    traced,
)
from hybridrag.tools.steps import run_step

ModuleRoute = Literal["hybrid", "text"]
ValidationRoute = Literal[
    "accepted or out of iterations", "accepted: answer (QA mode)", "rejected: corrective feedback"
]
FeedbackRoute = Literal["feedback to the router"]
ROUTING_ROUTES: dict[Hashable, str] = {"hybrid": "retrieve_hybrid", "text": "retrieve_text"}  # drawn labels
VALIDATION_ROUTES: dict[Hashable, str] = {
    "accepted or out of iterations": END,
    "accepted: answer (QA mode)": "generate_answer",
    "rejected: corrective feedback": "comment_on_routing",
}
FEEDBACK_ROUTES: dict[Hashable, str] = {"feedback to the router": "route_question"}


class State(InputState, OutputState, total=False):
    """Full HybGRAG state: the question, the loop's working values and the common output."""

    iteration: int
    router_messages: list[dict]
    action: dict
    retrieval: dict
    references: list[dict]
    verdict: str
    feedback: str


def _context(runtime: Runtime[HybGRAGContext]) -> HybGRAGContext:
    return cast(HybGRAGContext, context_of(runtime, HybGRAGContext))


def _setup(runtime: Runtime[HybGRAGContext], role: str) -> tuple[HybGRAGContext, Any, Any]:
    """Context, KB and the chat model of ``role`` (its own spec, else ``llm``)."""
    ctx = _context(runtime)
    return ctx, resolve_kb(ctx), load_chat_model(getattr(ctx, f"{role}_llm") or ctx.llm, ctx.llm_base_url)


def route_question(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Router: extract topic entities and useful relations, choose a module, link entities."""
    ctx, kb, model = _setup(runtime, "router")
    t = state.get("iteration", 0) + 1
    usage: dict = {}
    messages, shown = router.router_messages(kb, ctx, state)
    with timed("router", usage):
        action, fallback, calls = router.decide_action(kb, ctx, model, state["question"], messages, state)
    facts = router.action_facts(action)
    step = traced("route_question", action["module"], iteration=t, **facts, fallback=fallback, examples=shown)
    return {"iteration": t, "router_messages": messages, "action": action, "trace": [step], "usage": {**calls, **usage}}


def route_after_routing(state: State) -> ModuleRoute:
    """Hybrid module when chosen, a topic entity linked and a path to follow, else text."""
    return router.chosen_module(state["action"])


def _retrieved(out: dict, iteration: int) -> dict:
    """The trace entry of a retrieval: its module, how many references, the top ids and the graph facts."""
    facts, refs = out["retrieval"], out["references"]
    return traced(
        f"retrieve_{facts['module']}",
        f"{len(refs)} references",
        iteration=iteration,
        top=[r["id"] for r in refs[:5]],
        ego_sizes=facts["ego_sizes"],
        intersection=facts["intersection"],
        hops=facts.get("hops"),
    )


def retrieve_text(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Text module: vector similarity between the question and every text."""
    ctx = _context(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}

    def search(query: str, k: int) -> list:
        return run_step("hybgrag", STEPS, "dense_search", {"query": query, "k": k}, kb, ctx.tools)

    with timed("text_module", usage):
        res = text_retrieve(kb, state["question"], ctx.top_k, search=search)
        out = retrieval_outputs(kb, state["question"], res, own_ids(state.get("action", {})))
    return {**out, "trace": [_retrieved(out, state["iteration"])], "usage": usage}


def retrieve_hybrid(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Hybrid module: along the router's relation path, or the paper's ego-graphs of radius ``radius``."""
    ctx = _context(runtime)
    kb = resolve_kb(ctx)
    usage: dict = {}
    with timed("hybrid_module", usage):
        args, facts = hybrid_request(
            state["question"], state["action"], state.get("retrieval"), ctx.radius, ctx.text_hops, ctx.top_k
        )
        res = run_step("hybgrag", STEPS, "hybrid_retrieve", args, kb, ctx.tools)
        out = retrieval_outputs(kb, state["question"], res, set(args["entities"]), **facts)
    step = _retrieved(out, state["iteration"])
    if not out["references"] and state["iteration"] >= ctx.max_iterations:
        # the loop's last retrieval found nothing: end with the text module's references, not none
        text = retrieve_text(state, runtime)
        note = traced(
            "retrieve_hybrid",
            "nothing on the last iteration: the text module's references",
            iteration=state["iteration"],
        )
        return {**text, "trace": [step, note, *text["trace"]], "usage": merge_usage(usage, text["usage"])}
    return {**out, "trace": [step], "usage": usage}


def validate_retrieval(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Validator: accept or reject the top references (an empty retrieval is rejected unasked)."""
    ctx, kb, model = _setup(runtime, "validator")
    refs = state.get("references", [])[: ctx.num_references]
    usage: dict = {}
    calls: dict = {}
    shots: list[dict] = []
    reasoning, verdict = "nothing was retrieved", "no"
    if refs:
        with timed("validator", usage):  # the LLM, or (judge setting) the rule over the retrieval
            verdict, reasoning, shots, calls = validator.judge_retrieval(kb, ctx, model, state, refs)
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
    ctx = _context(runtime)
    if state["verdict"] == "yes" or state["iteration"] >= ctx.max_iterations:
        return "accepted: answer (QA mode)" if ctx.qa_mode(resolve_kb(ctx)) else "accepted or out of iterations"
    return "rejected: corrective feedback"


def comment_on_routing(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """Commentor: the LLM's corrective feedback, or rules where the settings let them decide."""
    ctx, kb, model = _setup(runtime, "commentor")
    usage: dict = {}
    with timed("commentor", usage):
        diagnosis, bank, calls = critic.diagnose(kb, ctx, model, state["question"], state["action"], state["retrieval"])
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


def route_after_comment(state: State) -> FeedbackRoute:
    """The commentor's feedback always goes back to the router (the corrective edge)."""
    return "feedback to the router"


def generate_answer(state: State, runtime: Runtime[HybGRAGContext]) -> dict:
    """QA mode: answer from the final references within ``answer_chars`` (the top reference's answer as fallback)."""
    ctx, _, model = _setup(runtime, "answer")
    refs = answer_references(state.get("references", []), ctx.answer_chars)
    usage: dict = {}
    with timed("answerer", usage):
        reply, calls = roles.answer(model, state["question"], format_references(refs), ctx.structured_method)
    text = reply_or_first(state["question"], reply.answer if reply else None, refs, own_ids(state.get("action", {})))
    decision = roles.answer_decision(reply, calls)
    if reply and text != reply.answer:
        decision = "the reply names a passage by its id: the top reference's answer"
    step = traced("generate_answer", decision, answer=text)
    return {"answer": text, "trace": [step], "usage": {**calls, **usage}}


builder = StateGraph(State, context_schema=HybGRAGContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(route_question)
builder.add_node(retrieve_text)
builder.add_node(retrieve_hybrid)
builder.add_node(validate_retrieval)
builder.add_node(comment_on_routing)
builder.add_node(generate_answer)
builder.add_edge(START, "route_question")  # every question starts at the router
builder.add_conditional_edges("route_question", route_after_routing, ROUTING_ROUTES)  # the module the router chose
builder.add_edge("retrieve_text", "validate_retrieval")  # a text retrieval is validated
builder.add_edge("retrieve_hybrid", "validate_retrieval")  # a hybrid retrieval is validated
builder.add_conditional_edges("validate_retrieval", route_after_validation, VALIDATION_ROUTES)  # end, answer or critic
builder.add_conditional_edges("comment_on_routing", route_after_comment, FEEDBACK_ROUTES)  # the corrective edge
builder.add_edge("generate_answer", END)  # QA mode ends with the answer

graph = builder.compile(name="hybgrag")
