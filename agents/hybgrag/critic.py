"""HybGRAG's corrective feedback: the LLM commentor's diagnosis, or rules from the retrieval.

With ``commentor="llm"`` (the default, as the paper) every rejected action goes to the LLM
commentor, which sees the question and the action with the experience bank as examples;
its reply is checked here (:func:`from_critique`). With ``commentor="rules"`` the situations
below are decided by rule from the action and the retrieval (no LLM call), and only the
rest goes to the LLM:

- ``no_entity``: the router extracted no entity (after schema checks) yet chose the hybrid module;
- ``incorrect_retrieval_module``: the text module was chosen and its reference was rejected
  (plus ``no_entity`` when nothing was extracted either);
- ``incorrect_entity_relation``: an entity that does not link to the KB, a relation outside the
  schema, a relation no ego-graph used, or a single entity with an empty neighbourhood;
- ``no_intersection``: two or more linked entities whose ego-graphs share no entity;
- ``incorrect_intersection``: two or more linked entities whose ego-graphs share entities,
  none of which the validator accepted.

Left to the LLM commentor (one linked entity and a sound-looking retrieval, so the error is
one of judgement): ``incorrect_entity_relation`` (naming them), ``missing_entity``,
``incorrect_retrieval_module``. The LLM's choice is
checked against the situation, and an unparseable or impossible reply falls back to
``missing_entity`` (one entity) or ``incorrect_intersection`` (several).

The validator and the commentor are judging roles a small model cannot do (``judge`` setting,
:mod:`agents.llm.judge`). When the rules judge, the validator's yes/no is
:func:`rule_verdict` (no LLM call) and the commentor's situations left to the LLM above get
``missing_entity`` (one entity) or ``incorrect_intersection`` (several) from the rule, so the
router is asked again with the same examples and a rejected same action walks one hop further.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hybridrag.agents.hybgrag import roles
from hybridrag.agents.hybgrag.report import format_references
from hybridrag.agents.hybgrag.roles import Critique
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.agents.llm.judge import rules_on_unusable, use_rules
from hybridrag.agents.shots import bank_for
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import hybgrag as P
from hybridrag.tools.text_hops import base_relation

NEAREST_TYPES = 5  # nearest solved examples whose answer types vote for the expected type


@dataclass
class Diagnosis:
    """The feedback for one rejected action: error items, who decided, and the message."""

    items: list[tuple[str, list[str]]]
    source: str
    reasoning: str = ""
    feedback: str = field(default="")

    @property
    def error_types(self) -> list[str]:
        """The error types, in order."""
        return [t for t, _ in self.items]


def _quoted(names: list[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def render_feedback(items: list[tuple[str, list[str]]]) -> str:
    """The corrective message: a fixed opening and one templated sentence per item."""
    lines = [P.FEEDBACK_PREFIX]
    for etype, names in items:
        if etype == "incorrect_entity_relation":
            ents = [n[len("entity:") :] for n in names if n.startswith("entity:")]
            rels = [n[len("relation:") :] for n in names if n.startswith("relation:")]
            if ents:
                lines.append(P.FEEDBACK["incorrect_entity"].format(names=_quoted(ents)))
            if rels:
                lines.append(P.FEEDBACK["incorrect_relation"].format(names=_quoted(rels)))
        else:
            lines.append(P.FEEDBACK[etype].format())
    return " ".join(lines)


def _diagnosis(items: list[tuple[str, list[str]]], source: str, reasoning: str = "") -> Diagnosis:
    return Diagnosis(items, source, reasoning, render_feedback(items))


def detect_situation(action: dict, retrieval: dict) -> Diagnosis | None:
    """Return the rule-decided diagnosis, or None when the LLM commentor must judge.

    Args:
        action: the checked router action plus ``linked`` (entities found in the KB) and
            ``unlinked`` (names not found).
        retrieval: facts of the retrieval that ran: ``module``, ``intersection``,
            ``ego_sizes``, ``unused_relations``.
    """
    has_entities = bool(action["entities"])
    if action["module"] == "text":
        items = [] if has_entities else [("no_entity", [])]
        return _diagnosis([*items, ("incorrect_retrieval_module", [])], "rule")
    if not has_entities:
        return _diagnosis([("no_entity", [])], "rule")
    wrong = [f"entity:{n}" for n in action.get("unlinked", [])]
    bad_relations = action.get("dropped_relations", []) + retrieval.get("unused_relations", [])
    wrong += [f"relation:{r}" for r in bad_relations]
    linked = action.get("linked", [])
    if len(linked) == 1 and not retrieval.get("intersection"):
        wrong.append(f"entity:{linked[0]['name']}")
    if wrong:
        return _diagnosis([("incorrect_entity_relation", list(dict.fromkeys(wrong)))], "rule")
    if len(linked) >= 2:
        etype = "incorrect_intersection" if retrieval.get("intersection") else "no_intersection"
        return _diagnosis([(etype, [])], "rule")
    return None


def fallback_diagnosis(action: dict) -> Diagnosis:
    """The diagnosis used when the commentor's reply is unusable."""
    etype = "missing_entity" if len(action.get("linked", [])) <= 1 else "incorrect_intersection"
    return _diagnosis([(etype, [])], "fallback")


def fallback_from_rules(action: dict, retrieval: dict) -> Diagnosis | None:
    """The rules' diagnosis labelled as a fallback (for an unusable commentor reply), or None."""
    found = detect_situation(action, retrieval)
    return None if found is None else _diagnosis(found.items, "fallback")


def from_critique(critique: Critique | None, action: dict) -> Diagnosis:
    """Check the LLM commentor's critique against the situation and turn it into a diagnosis."""
    if critique is None:
        return fallback_diagnosis(action)
    n_linked = len(action.get("linked", []))
    etype = critique.error_type
    if etype == "missing_entity" and n_linked >= 2:
        etype = "incorrect_intersection"
    elif etype in ("incorrect_intersection", "no_intersection") and n_linked < 2:
        etype = "missing_entity"
    elif etype == "no_intersection":
        etype = "incorrect_intersection"
    if etype == "no_entity" and action["entities"]:  # entities were extracted: not this error
        return fallback_diagnosis(action)
    if etype == "incorrect_entity_relation":
        ents = {e["name"].lower(): e["name"] for e in action["entities"]}
        rels = {r.lower(): r for r in action["relations"]}
        names = [f"entity:{ents[n.lower()]}" for n in critique.wrong_entities if n.lower() in ents]
        names += [f"relation:{rels[r.lower()]}" for r in critique.wrong_relations if r.lower() in rels]
        if not names:
            return fallback_diagnosis(action)
        return _diagnosis([(etype, names)], "llm", critique.reasoning)
    return _diagnosis([(etype, [])], "llm", critique.reasoning)


def expected_types(kb: KnowledgeBase, action: dict, question: str, use_bank: bool) -> set[str]:
    """The answer types the action should reach: with the bank's examples on, the most common
    answer type among the ``NEAREST_TYPES`` nearest solved examples that follow the nearest one's
    path (one example can mislead: entity ids are names, so the answer "2012" of a release-year
    question is typed as the film "2012"), else the types the schema puts at the end of the router's relations
    walked from the topic's type (empty: unknown, any type passes).
    """
    if use_bank:  # the most common answer type of the nearest examples that share the top one's path
        near = bank_for(kb).nearest(question, NEAREST_TYPES, role="router")
        kinds = Counter(ex.answer_type for ex in near if ex.relations == near[0].relations and ex.answer_type)
        if kinds:
            return {kinds.most_common(1)[0][0]}
    linked, rels = action.get("linked", []), action.get("relations", [])
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
        ok = bool(retrieval.get("intersection"))
        return (
            ("yes", "rule: the topic entities' ego-graphs intersect")
            if ok
            else ("no", "rule: the topic entities' ego-graphs share no entity")
        )
    if retrieval.get("unused_relations"):
        return "no", f"rule: relations not followed: {', '.join(retrieval['unused_relations'])}"
    followed = {base_relation(t[1]) for path in top.get("triples", []) for t in path}
    wanted = set(action.get("relations", []))
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


def _uses_bank(ctx: Any) -> bool:
    return ctx.examples == "kb" and not ctx.few_shot and ctx.num_few_shot > 0


def judge_retrieval(
    kb: KnowledgeBase, ctx: Any, model: Any, state: dict, refs: list[dict]
) -> tuple[str, str, list[dict], dict]:
    """The validator's decision under ``ctx.judge``: ``(verdict, reasoning, examples shown, usage)``."""
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


def rule_diagnosis(ctx: Any, action: dict, retrieval: dict) -> Diagnosis | None:
    """The commentor's rule decision (``commentor="rules"``, or the rules judging under ``judge``),
    or None when the LLM commentor writes the feedback.
    """
    judged = use_rules(ctx.judge, ctx.commentor_llm or ctx.llm)
    if ctx.commentor != "rules" and not judged:
        return None
    found = detect_situation(action, retrieval)
    if found is None and judged:
        etype = "missing_entity" if len(action.get("linked", [])) <= 1 else "incorrect_intersection"
        return _diagnosis([(etype, [])], "rule")
    return found
