"""HybGRAG's router turn: its conversation, its action checked against the KB, and the module it leads to.

The first turn shows the nearest solved examples; later turns continue the same conversation with
the commentor's feedback. The reply is checked against the schema and its entities linked; an
unparseable reply takes the paper's fallback (the text module), and a hybrid action with no linked
entity or no path to follow runs the text module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from hybridrag.agents.hybgrag import reroute, roles
from hybridrag.agents.hybgrag.retrieval import link_action
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.agents.llm.constrained import is_llama_cpp
from hybridrag.agents.llm.judge import few_shot_count
from hybridrag.agents.llm.structured import call_structured
from hybridrag.agents.llm.usage import add_usage
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import hybgrag as P
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


def route_in_two_calls(
    model: Any, messages: list[dict], method: str, choices: dict | None = None
) -> tuple[roles.RouterAction | None, dict]:
    """Router as the paper's Table 8: one call extracts entities and relations, a second picks the module.

    The second call continues the conversation with the extraction as the assistant's turn. An
    unparseable extraction is None (the caller's fallback); an unparseable module reply takes
    the paper's fallback, the text module.
    """
    *head, last = messages
    ask = [*head, {**last, "content": f"{last['content']}\n{P.ROUTER_EXTRACT_ONLY.template}"}]
    found, usage = call_structured(model, roles.RouterExtraction, ask, role="router", method=method, choices=choices)
    if found is None:
        return None, usage
    said = {"role": "assistant", "content": _extraction_json(found)}
    then = [*ask, said, {"role": "user", "content": P.ROUTER_MODULE.template}]
    picked, more = call_structured(model, roles.RouterModule, then, role="router", method=method)
    action = roles.RouterAction(
        entities=found.entities, relations=found.relations, module=picked.module if picked else "text"
    )
    return action, add_usage(usage, more)


def _extraction_json(found: roles.RouterExtraction) -> str:
    entities = [e.model_dump() for e in found.entities]
    return json.dumps({"entities": entities, "relations": found.relations}, ensure_ascii=False, separators=(",", ":"))


def decide_action(
    kb: KnowledgeBase,
    ctx: Any,
    model: Any,
    question: str,
    messages: list[dict],
    state: Mapping[str, Any] | None = None,
) -> tuple[dict, str | None, dict]:
    """Ask the router, check its reply against the schema and link its entities.

    The action gets ``walkable``: a path to follow exists, along the graph's relations or (a KB
    without relation types) along the router's relation phrases through passages. Under the
    small-model rules (:func:`agents.hybgrag.reroute.rules_route`) the first action walks the shown
    examples' path where the router's relations are part of it, and a later one (``state`` holds
    the rejected action) is made by rule without a router call.

    Returns:
        ``(action, fallback taken or None, usage)``.
    """
    by_rule = reroute.rules_route(ctx)
    paths = reroute.shown_paths(kb, ctx, question) if by_rule else []
    if by_rule and state and state.get("iteration", 0) > 0 and state.get("action"):
        return reroute.rerouted(state["action"], paths, bool(state.get("references"))), None, {}
    action, fallback, calls = _ask(kb, ctx, model, question, messages)
    return reroute.with_examples_path(action, paths), fallback, calls


def _ask(kb: KnowledgeBase, ctx: Any, model: Any, question: str, messages: list[dict]) -> tuple[dict, str | None, dict]:
    """The router's reply, checked against the schema, its entities linked (``link_rules``: reading the question)."""
    schema = kb.graph.schema()
    choices = roles.router_choices(schema, question) if is_llama_cpp(model) else None
    ask = roles.route if ctx.router_calls == 1 else route_in_two_calls
    reply, calls = ask(model, messages, ctx.structured_method, choices)
    fallback = None
    if reply is None:  # the paper's fallback: plain text retrieval
        reply, fallback = roles.RouterAction(module="text"), "unparseable router output: text module"
    action = link_action(kb, roles.check_action(reply, schema), question if ctx.link_rules else "")
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
        **{k: action[k] for k in ("path", "rule", "merged") if action.get(k)},  # rules: reroute.py, linking.py
    }
