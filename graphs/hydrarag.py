"""HydraRAG: structured cross-source exploration with tri-factor verification (Tan et al.).

detect_sources (topic entities aligned per source → S_t) → analyze_question (sub-questions,
skyline, predicted depth) → select_sources (agentic selector → S_a, initial probe) →
explore_source per source in parallel (KG paths at min(D_predict, D_max), document and web
sentences → paths) → prune_evidence (relevance, cross-source verification, LLM selection)
→ refine_paths → check_answer: {Yes} → END; {No} → plan_refined_exploration (follow-up
question, all of S_t, D_max) → ... → plan_predicted_exploration (predicted answers) → ...;
after ``max_iterations`` rounds (at most three) → collect_final_paths (union of every round's
selected paths, pruned and refined again) → generate_answer. The nodes are wiring: the work is in
:mod:`agents.hydrarag.initial`, :mod:`agents.hydrarag.rounds`, :mod:`agents.hydrarag.evidence` and
:mod:`agents.hydrarag.answering`; settings in :mod:`agents.hydrarag.context`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable
from typing import Annotated, Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from hybridrag.agents.hydrarag import answering, evidence, initial, rounds
from hybridrag.agents.hydrarag.context import HydraRAGContext
from hybridrag.agents.hydrarag.views import render_trace  # the CLI prints the refinement path
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.graphs.runtime import InputState, OutputState, context_of, merge_usage, resolve_kb, timed
from hybridrag.kb.base import KnowledgeBase

__all__ = ["HydraRAGContext", "State", "builder", "graph", "render_trace"]

Body = Callable[[Any, HydraRAGContext, KnowledgeBase, BaseChatModel], dict]


class State(InputState, OutputState, total=False):
    """Full HydraRAG state: initialization results, the current probe, paths and verdicts."""

    shots: list[dict]
    mentions: list[str]
    unlinked: list[str]
    topics: list[dict]
    topic_keys: list[str]
    doc_topics: list[str]
    available: list[str]
    sources: list[str]
    split_questions: list[str]
    skyline: str
    depth: int
    round: int
    phase: str
    probe: dict
    subgraph: list[str]
    candidates: Annotated[list[dict], operator.add]
    kept: Annotated[list[dict], operator.add]
    documents: Annotated[list[dict], operator.add]  # every document the rounds read (agents.hydrarag.documents)
    selected: list[dict]
    summary: str
    verdict: str
    shortfall: dict


class ExploreState(TypedDict):
    """What one parallel source exploration receives."""

    question: str
    source: str
    probe: dict
    topic_keys: list[str]
    has_subgraph: bool


def _context(runtime: Runtime[HydraRAGContext]) -> HydraRAGContext:
    return cast(HydraRAGContext, context_of(runtime, HydraRAGContext))


def _run(stage: str, body: Body, state: Any, runtime: Runtime[HydraRAGContext]) -> dict:
    """Run a node body with the context, KB and model: its update and trace entry, its seconds under ``stage``."""
    ctx = _context(runtime)
    seconds: dict = {}
    with timed(stage, seconds):
        update = body(state, ctx, resolve_kb(ctx), load_chat_model(ctx.llm, ctx.llm_base_url))
    update["usage"] = merge_usage(update.get("usage"), seconds)
    return update


def detect_sources(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Available evidence detection: topic entities (LLM) aligned per source → S_t."""
    return _run("detect_sources", initial.detect, state, runtime)


def analyze_question(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Question analysis: sub-questions, skyline indicator, predicted depth; topics reordered."""
    return _run("analyze_question", initial.analyse, state, runtime)


def select_sources(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Agentic source selector (S_a ⊆ S_t) and the initial exploration probe."""
    return _run("select_sources", initial.select, state, runtime)


def explore_source(state: ExploreState, runtime: Runtime[HydraRAGContext]) -> dict:
    """One source of one exploration phase: KG paths, or document / web sentences → paths."""
    return _run(f"explore_{state['source']}", rounds.explore, state, runtime)


def prune_evidence(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Relevance (top W1), cross-source verification (top W2), LLM selection (W_max)."""
    return _run("prune_evidence", evidence.prune, state, runtime)


def refine_paths(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Path refinement: the selected paths summarised into a short chain of reasoning."""
    return _run("refine_paths", evidence.refine, state, runtime)


def check_answer(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """CoT answer check: {Yes} with the answer, or {No} (an empty evidence set is {No} unasked)."""
    return _run("check_answer", answering.check, state, runtime)


def plan_refined_exploration(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Refined exploration: follow-up question and skyline; every source of S_t at D_max."""
    return _run("plan_refined_exploration", rounds.plan_refined, state, runtime)


def plan_predicted_exploration(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Predicted exploration: predicted answers aligned to the KB, one chain each, at D_max."""
    return _run("plan_predicted_exploration", rounds.plan_predicted, state, runtime)


def collect_final_paths(state: State) -> dict:
    """Union of every round's selected paths (Paths_F) for a last pruning and refinement."""
    return evidence.collect_final(dict(state))


def generate_answer(state: State, runtime: Runtime[HydraRAGContext]) -> dict:
    """Final answer from the final paths and the model's own knowledge."""
    return _run("generate_answer", answering.generate, state, runtime)


SourcesRoute = Literal["to the selected sources", "no source selected"]
RefinedRoute = Literal["a round's paths", "the final paths"]
CheckRoute = Literal["yes", "no: refined exploration", "no: predicted exploration", "no: rounds spent"]
CollectedRoute = Literal["several rounds: prune the union", "one round: answer"]
SOURCE_ROUTES: dict[Hashable, str] = {
    "to the selected sources": "explore_source",
    "no source selected": "prune_evidence",
}  # labels in the drawing
REFINED_ROUTES: dict[Hashable, str] = {"a round's paths": "check_answer", "the final paths": "generate_answer"}
CHECK_ROUTES: dict[Hashable, str] = {
    "yes": END,
    "no: refined exploration": "plan_refined_exploration",
    "no: predicted exploration": "plan_predicted_exploration",
    "no: rounds spent": "collect_final_paths",
}
COLLECTED_ROUTES: dict[Hashable, str] = {
    "several rounds: prune the union": "prune_evidence",
    "one round: answer": "generate_answer",
}


def route_to_sources(state: State) -> list[Send] | SourcesRoute:
    """Fan the probe out to one explore_source per selected source (none → prune at once)."""
    q, probe, keys, has_subgraph = (
        state["question"],
        state["probe"],
        state.get("topic_keys", []),
        bool(state.get("subgraph")),
    )
    sends = [
        Send(
            "explore_source",
            {"question": q, "source": s, "probe": probe, "topic_keys": keys, "has_subgraph": has_subgraph},
        )
        for s in probe["sources"]
    ]
    return sends or "no source selected"


def route_after_refinement(state: State) -> RefinedRoute:
    """The final paths go to answer generation; a round's paths go to the answer check."""
    return "the final paths" if state["phase"] == "final" else "a round's paths"


def route_after_check(state: State, runtime: Runtime[HydraRAGContext]) -> CheckRoute:
    """{Yes} → END; {No} → the next exploration phase, or the final answer when rounds are spent."""
    if state["verdict"] == "yes":
        return "yes"
    if state["round"] >= _context(runtime).rounds():
        return "no: rounds spent"
    return "no: refined exploration" if state["round"] == 1 else "no: predicted exploration"


def route_after_collection(state: State) -> CollectedRoute:
    """Re-prune the union when several rounds contributed; one round's paths are final already."""
    return "several rounds: prune the union" if state["round"] > 1 and state.get("kept") else "one round: answer"


builder = StateGraph(State, context_schema=HydraRAGContext, input_schema=InputState, output_schema=OutputState)
builder.add_node(detect_sources)
builder.add_node(analyze_question)
builder.add_node(select_sources)
builder.add_node(explore_source)  # a Send target: takes its own input (ExploreState)
builder.add_node(prune_evidence)
builder.add_node(refine_paths)
builder.add_node(check_answer)
builder.add_node(plan_refined_exploration)
builder.add_node(plan_predicted_exploration)
builder.add_node(collect_final_paths)
builder.add_node(generate_answer)
builder.add_edge(START, "detect_sources")  # topic entities and available sources first
builder.add_edge("detect_sources", "analyze_question")  # the skyline needs the topic entities
builder.add_edge("analyze_question", "select_sources")  # the selector reads the analysis
builder.add_conditional_edges("select_sources", route_to_sources, SOURCE_ROUTES)  # fan out to the sources
builder.add_edge("explore_source", "prune_evidence")  # every source's paths are pruned together
builder.add_edge("prune_evidence", "refine_paths")  # the selected paths are summarised
builder.add_conditional_edges("refine_paths", route_after_refinement, REFINED_ROUTES)  # round → check; final → answer
builder.add_conditional_edges("check_answer", route_after_check, CHECK_ROUTES)  # {Yes} → END; {No} → next phase
builder.add_conditional_edges("plan_refined_exploration", route_to_sources, SOURCE_ROUTES)  # to every source of S_t
builder.add_conditional_edges("plan_predicted_exploration", route_to_sources, SOURCE_ROUTES)  # to the predictions
builder.add_conditional_edges("collect_final_paths", route_after_collection, COLLECTED_ROUTES)  # union → prune
builder.add_edge("generate_answer", END)  # the answer ends the run

graph = builder.compile(name="hydrarag")
