"""HybGRAG's router turn: its conversation, its action checked against the KB, and the module it leads to.

The first turn shows the nearest solved examples; later turns continue the same conversation with
the commentor's feedback. The reply is checked against the schema and its entities linked; an
unparseable reply takes the paper's fallback (the text module), and a hybrid action with no linked
entity or no path to follow runs the text module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from hybridrag.agents.hybgrag import roles
from hybridrag.agents.hybgrag.retrieval import link_action
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.agents.llm.constrained import is_llama_cpp
from hybridrag.agents.llm.judge import few_shot_count
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.text_hops import has_passages


def router_messages(kb: KnowledgeBase, ctx: Any, state: Mapping[str, Any]) -> tuple[list[dict], list[str] | None]:
    """The router's conversation for this iteration.

    Returns:
        ``(messages, example questions shown)``; examples are shown on the first turn only (else None).
    """
    question = state["question"]
    if state.get("iteration", 0) == 0:
        n = few_shot_count(ctx.num_few_shot, ctx.small_model_few_shot, ctx.llm)
        shots = examples_for(kb, "router", question, ctx.examples, n, ctx.few_shot)
        messages = roles.router_first_messages(question, kb.graph.schema(), shots)
        return messages, [ex["question"] for ex in shots]
    messages = roles.router_reflect_messages(state["router_messages"], state["action"], state["feedback"], question)
    return messages, None


def decide_action(
    kb: KnowledgeBase, ctx: Any, model: Any, question: str, messages: list[dict]
) -> tuple[dict, str | None, dict]:
    """Ask the router, check its reply against the schema and link its entities.

    The action gets ``walkable``: a path to follow exists, along the graph's relations or (a KB
    without relation types) along the router's relation phrases through passages.

    Returns:
        ``(action, fallback taken or None, usage)``.
    """
    schema = kb.graph.schema()
    choices = roles.router_choices(schema, question) if is_llama_cpp(model) else None
    reply, calls = roles.route(model, messages, ctx.structured_method, choices)
    fallback = None
    if reply is None:  # the paper's fallback: plain text retrieval
        reply, fallback = roles.RouterAction(module="text"), "unparseable router output: text module"
    action = link_action(kb, roles.check_action(reply, schema))
    action["walkable"] = bool(schema.relation_types) or bool(
        action["relations"] and ctx.text_hops and ctx.radius == 0 and has_passages(kb)
    )
    if action["module"] == "hybrid" and not (action["linked"] and action["walkable"]):
        fallback = fallback or ("no topic entity linked" if action["walkable"] else "no relation to follow") + ": text"
    return action, fallback, calls


def chosen_module(action: Mapping[str, Any]) -> Literal["hybrid", "text"]:
    """The module that runs: hybrid when chosen, a topic entity linked and a path to follow, else text."""
    return "hybrid" if action["module"] == "hybrid" and action["linked"] and action.get("walkable", True) else "text"


def action_facts(action: Mapping[str, Any]) -> dict:
    """What the trace shows of an action: module, typed entities, relations, linked ids and what was dropped."""
    return {
        "module": action["module"],
        "entities": [f"{e['name']} ({e['type'] or 'unknown'})" for e in action["entities"]],
        "relations": action["relations"],
        "linked": [e["id"] for e in action["linked"]],
        "unlinked": action["unlinked"],
        "dropped": action["dropped_relations"] + action["dropped_types"],
    }
