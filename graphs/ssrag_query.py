"""SSRAG's query side: Algorithm 1's augmentation and Algorithm 2's router, as graph nodes.

decompose_query → extract_entities (with the entity check: unknown entities send the extractor a
reason, :func:`graphs.ssrag_edges.after_entities`) → detect_intent → enhance_query → route_query
(TEMPORAL or FACTUAL, then web or the local corpus; with ``max_iterations > 1`` the router is asked
once more, with the reason, when :func:`agents.ssrag.correct.route_problem` finds one). Each node
makes its role's LLM call (the router's under ``routing="llm"``), or with a small model (``judge``)
takes the rule of :mod:`graphs.ssrag_small`. :mod:`graphs.ssrag` wires them.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from hybridrag.agents.llm.structured import add_usage
from hybridrag.agents.ssrag import augment as aug
from hybridrag.agents.ssrag import correct as fix
from hybridrag.agents.ssrag import routing as rt
from hybridrag.agents.ssrag import shots
from hybridrag.agents.ssrag.vectors import query_vector
from hybridrag.graphs.runtime import timed
from hybridrag.graphs.ssrag_small import RULED, extract, rule_intent, small
from hybridrag.graphs.ssrag_state import SSRAGContext, State, _out, _setup


def decompose_query(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """DecomposeQuery: the question as self-contained sub-questions (examples from the KB's bank)."""
    ctx, kb, model = _setup(runtime)
    usage: dict = {}
    with timed("decompose", usage):
        shown = shots.nearest(kb, state["question"], ctx.n_examples, ctx.examples)
        if small(ctx):
            subs, calls, note = [state["question"]], {}, f"{RULED}: the question itself"
        else:
            subs, calls, note = aug.decompose(
                model, state["question"], ctx.structured_method, shots.decompose_shots(shown)
            )
    examples = [e.question for e in shown]
    out = _out(
        "decompose_query", f"{len(subs)} sub-question(s)", usage, calls, note, sub_questions=subs, examples=examples
    )
    return {"sub_questions": subs, "examples": examples, **out}


def extract_entities(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """ExtractKeyEntities, alias canonicalisation (longest surface kept), and the entity check."""
    ctx, kb, model = _setup(runtime)
    usage: dict = {}
    question, rounds, feedback = state["question"], state.get("entity_rounds", 0), state.get("feedback", "")
    follow = fix.follow_up(state["entity_reply"], feedback, question) if feedback else ()
    with timed("extract_entities", usage):
        shown = shots.nearest(kb, question, ctx.n_examples, ctx.examples)
        found, calls, note = extract(
            model, kb, ctx, question, state["sub_questions"], follow, shots.kinds(kb) + shots.entity_shots(shown)
        )
        entities = aug.canonicalise(kb, found)
        problem = fix.entity_problems(entities, fix.known_names(kb, question))
    reply = ", ".join(e["name"] for e in found) or "(no entity)"
    again = bool(problem) and rounds + 1 < ctx.max_iterations and reply != state.get("entity_reply")
    # re-augmented after a failed answer but the same entities again: a new pass would repeat the last one
    stalled = bool(feedback) and state.get("answer_rounds", 0) > 0 and reply == state.get("entity_reply")
    names, linked = [e["name"] for e in entities], [e["id"] for e in entities if e["id"]]
    return {
        "entities": entities,
        "entity_rounds": rounds + 1,
        "entity_reply": reply,
        "feedback": problem if again else "",
        "stalled": stalled and not again,
        **_out(
            "extract_entities",
            ", ".join(names) or "no entity",
            usage,
            calls,
            note,
            linked=linked,
            feedback=feedback or None,
            problem=problem or None,
        ),
    }


def detect_intent(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """DetectIntent: question word, subtopics, temporal and factual cues (LLM merged with rules)."""
    ctx, _, model = _setup(runtime)
    usage: dict = {}
    with timed("detect_intent", usage):
        if small(ctx):
            cues, calls, note = rule_intent(state["question"]), {}, f"{RULED}: rule cues only"
        else:
            cues, calls, note = aug.detect_intent(
                model, state["question"], state["sub_questions"], state["entities"], ctx.structured_method
            )
    return {"cues": cues, **_out("detect_intent", cues["intent"], usage, calls, note, **cues)}


def enhance_query(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """EnhanceQuery: the augmented query Q_aug (acronyms expanded, entities verbatim, word limit)."""
    ctx, _, model = _setup(runtime)
    usage: dict = {}
    with timed("enhance_query", usage):
        if small(ctx):
            query, calls, note = (
                aug.canonical_question(state["question"], state["entities"]),
                {},
                f"{RULED}: canonicalised question",
            )
        else:
            query, calls, note = aug.enhance_query(
                model, state["question"], state["entities"], state["cues"], ctx.max_query_tokens, ctx.structured_method
            )
    return {"query": query, **_out("enhance_query", query, usage, calls, note)}


def route_query(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Agentic router: TEMPORAL or FACTUAL, then web or the local corpus (empty local → web)."""
    ctx, kb, model = _setup(runtime)
    calls, note, rule = {}, None, rt.rule_label(state["cues"])
    usage: dict = {}
    with timed("route", usage):
        label, problem = rule, ""
        local = rt.probe_local(
            kb, query_vector(kb, state["query"]), state["query"], state["entities"], ctx.local_min_score
        )
        if small(ctx):
            note = f"{RULED}: temporal-cue rule"
        elif ctx.routing == "llm":
            reply, calls = rt.classify(model, state["query"], ctx.structured_method)
            label, note = (reply.label, None) if reply else (rule, "unparseable label: temporal-cue rule")
            web = "the local corpus has results for it" if local["found"] else ""
            problem = fix.route_problem(label, rule, state["cues"], web) if reply and ctx.max_iterations > 1 else ""
            if problem:  # the corrective edge of the router: asked once more, with the reason
                again, more = rt.classify(model, state["query"], ctx.structured_method, feedback=(label, problem))
                calls, label = add_usage(calls, more), again.label if again else label
        source, reason = rt.choose_source(label, local)
    return {
        "route": label,
        "source": source,
        **_out(
            "route_query",
            f"{label} → {source}",
            usage,
            calls,
            note,
            reason=reason,
            rule_label=rule,
            local=local,
            feedback=problem or None,
        ),
    }
