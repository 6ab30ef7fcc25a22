"""HybGRAG's validator: accept or reject the top references, by the LLM or by rule (``judge`` setting).

The validator is a judging role a small model cannot do (:mod:`agents.llm.judge`). When the rules
judge, the verdict is :func:`rule_verdict` over what the retrieval produced (no LLM call); under
``judge="auto"`` an unparseable LLM reply is judged by the rule too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from hybridrag.agents.hybgrag import roles
from hybridrag.agents.hybgrag.report import format_references
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.agents.llm.judge import rules_on_unusable, use_rules
from hybridrag.agents.shots import bank_for
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.text_hops import base_relation

NEAREST_TYPES = 5  # nearest solved examples whose answer types vote for the expected type


def expected_types(kb: KnowledgeBase, action: dict, question: str, use_bank: bool) -> set[str]:
    """The answer types the action should reach (empty: unknown, any type passes).

    With the bank's examples on: the most common answer type among the ``NEAREST_TYPES`` nearest
    solved examples that follow the nearest one's path (one example can mislead: entity ids are
    names, so the answer "2012" of a release-year question is typed as the film "2012"). Otherwise
    the types the schema puts at the end of the router's relations walked from the topic's type.
    """
    if use_bank:  # the most common answer type of the nearest examples that share the top one's path
        near = bank_for(kb).nearest(question, NEAREST_TYPES, role="router")
        kinds = Counter(ex.answer_type for ex in near if ex.relations == near[0].relations and ex.answer_type)
        if kinds:
            return {kinds.most_common(1)[0][0]}
    linked, rels = action.get("linked", []), list(action.get("path") or action.get("relations", []))
    types = kb.graph.schema().relation_types
    if len(linked) != 1 or not rels or not all(r in types for r in rels):
        return set()
    current = {linked[0].get("kb_type") or linked[0].get("type") or ""}
    for rel in rels:
        rt = types[rel]
        current = ({*rt.tail_types} if current & set(rt.head_types) else set()) | (
            {*rt.head_types} if current & set(rt.tail_types) else set()
        )
        if not current:
            return set()
    return current


def _path_verdict(kb: KnowledgeBase, action: dict, top: dict, expected: set[str]) -> tuple[str, str]:
    """One topic entity: accept a top reference reached along exactly the router's relations with an expected type."""
    followed = {base_relation(t[1]) for path in top.get("triples", []) for t in path}
    wanted = set(action.get("path") or action.get("relations", []))  # a rule's path, else the router's
    if wanted and followed != wanted:
        return "no", (
            f"rule: the top reference was reached along {', '.join(sorted(followed)) or 'no relation'}, "
            f"not the router's {', '.join(sorted(wanted))}"
        )
    ent = kb.graph.get(top["id"])
    etype = ent.type if ent is not None else None
    if expected and etype not in expected:
        return "no", (
            f"rule: the top reference {top['name']!r} is a {etype or 'untyped entity'}; "
            f"the question asks for a {' or '.join(sorted(expected))}"
        )
    return "yes", f"rule: reached along the router's path ({', '.join(sorted(wanted))}) with the expected type"


def rule_verdict(
    kb: KnowledgeBase, action: dict, retrieval: dict, references: list[dict], expected: set[str]
) -> tuple[str, str]:
    """The validator's rule: ``("yes" | "no", reason)`` from what the retrieval produced.

    Accept when the top reference was reached along the router's own path and has the expected
    answer type: the hybrid module ran, every relation of the action was followed and the top
    reference's path uses exactly those relations, the reference is not a topic entity, and its KB
    type is one of ``expected`` (when known). Several topic entities: accept when their ego-graphs
    intersect. The text module is accepted only on a KB without relation types (no path exists to
    follow); elsewhere it means the router found no walkable action.
    """
    if not references:
        return "no", "rule: nothing was retrieved"
    top, schema_rels = references[0], kb.graph.schema().relation_types
    if retrieval.get("module") != "hybrid":
        if schema_rels:
            return "no", "rule: text module on a KB with relations (no topic entity and path were followed)"
        return "yes", "rule: text module on a KB without relation types"
    linked = {e["id"] for e in action.get("linked", [])}
    if top["id"] in linked:
        return "no", f"rule: the top reference {top['name']!r} is a topic entity"
    if len(linked) >= 2:
        if retrieval.get("intersection"):
            return "yes", "rule: the topic entities' ego-graphs intersect"
        return "no", "rule: the topic entities' ego-graphs share no entity"
    if retrieval.get("unused_relations"):
        return "no", f"rule: relations not followed: {', '.join(retrieval['unused_relations'])}"
    return _path_verdict(kb, action, top, expected)


def _uses_bank(ctx: Any) -> bool:
    return ctx.examples == "kb" and not ctx.few_shot and ctx.num_few_shot > 0


def judge_retrieval(
    kb: KnowledgeBase, ctx: Any, model: Any, state: Mapping[str, Any], refs: list[dict]
) -> tuple[str, str, list[dict], dict]:
    """The validator's decision under ``ctx.judge``.

    Returns:
        ``(verdict, reasoning, examples shown, usage)``, the verdict ``"yes"`` or ``"no"``.
    """
    action, retrieval, question = state.get("action", {}), state.get("retrieval", {}), state["question"]

    def by_rule(prefix: str = "") -> tuple[str, str]:
        verdict, why = rule_verdict(kb, action, retrieval, refs, expected_types(kb, action, question, _uses_bank(ctx)))
        return verdict, prefix + why

    if use_rules(ctx.judge, ctx.validator_llm or ctx.llm):
        return (*by_rule(), [], {})
    shots = examples_for(kb, "validator", question, ctx.examples, ctx.validator_examples)
    reply, calls = roles.validate(model, question, format_references(refs), ctx.structured_method, shots)
    if reply is not None:
        return reply.verdict, reply.reasoning, shots, calls
    if rules_on_unusable(ctx.judge):
        return (*by_rule("unparseable validator output; "), shots, calls)
    return "no", "unparseable validator output: reject", shots, calls
