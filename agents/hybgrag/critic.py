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
checked against the situation (an intersection error against the intersection the retrieval
found, so both ``no_intersection`` and ``incorrect_intersection`` reach the router), and an
unparseable or impossible reply falls back to ``missing_entity`` (one entity) or
``incorrect_intersection`` (several).

The commentor is a judging role a small model cannot do (``judge`` setting,
:mod:`agents.llm.judge`; the validator's rule is :mod:`agents.hybgrag.validator`). When the rules
judge, the situations left to the LLM above get ``missing_entity`` (one entity) or
``incorrect_intersection`` (several) from the rule, so the router is asked again with the same
examples and a rejected same action walks one hop further.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hybridrag.agents.hybgrag import roles
from hybridrag.agents.hybgrag.roles import Critique
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.agents.llm.judge import use_rules
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import hybgrag as P


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


def _intersection_kind(retrieval: dict | None) -> str | None:
    """Which intersection error the retrieval shows, or None when it does not say."""
    if not retrieval or retrieval.get("intersection") is None:  # not an intersection retrieval
        return None
    return "incorrect_intersection" if retrieval["intersection"] else "no_intersection"


def from_critique(critique: Critique | None, action: dict, retrieval: dict | None = None) -> Diagnosis:
    """Check the LLM commentor's critique against the situation and turn it into a diagnosis.

    An intersection error is checked against the retrieval when it ran with several entities:
    ``no_intersection`` when their neighbourhoods shared nothing, ``incorrect_intersection`` when
    they shared entities the validator rejected (Table 4's two cases).
    """
    if critique is None:
        return fallback_diagnosis(action)
    n_linked = len(action.get("linked", []))
    etype = critique.error_type
    if etype == "missing_entity" and n_linked >= 2:
        etype = _intersection_kind(retrieval) or "incorrect_intersection"
    elif etype in ("incorrect_intersection", "no_intersection") and n_linked < 2:
        etype = "missing_entity"
    elif etype in ("incorrect_intersection", "no_intersection"):
        etype = _intersection_kind(retrieval) or etype
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


def rule_diagnosis(ctx: Any, action: dict, retrieval: dict) -> Diagnosis | None:
    """The commentor's rule decision, or None when the LLM commentor writes the feedback.

    The rules decide under ``commentor="rules"`` (where they apply) and whenever they judge under ``judge``.
    """
    judged = use_rules(ctx.judge, ctx.commentor_llm or ctx.llm)
    if ctx.commentor != "rules" and not judged:
        return None
    found = detect_situation(action, retrieval)
    if found is None and judged:
        etype = "missing_entity" if len(action.get("linked", [])) <= 1 else "incorrect_intersection"
        return _diagnosis([(etype, [])], "rule")
    return found


def diagnose(
    kb: KnowledgeBase, ctx: Any, model: Any, question: str, action: dict, retrieval: dict
) -> tuple[Diagnosis, list[dict], dict]:
    """The feedback on a rejected action: the rules' diagnosis, else the LLM commentor's.

    An unusable commentor reply takes what the retrieval shows, if anything, else the fixed fallback.

    Returns:
        ``(diagnosis, experience-bank examples shown, usage)``.
    """
    diagnosis = rule_diagnosis(ctx, action, retrieval)
    if diagnosis is not None:
        return diagnosis, [], {}
    bank = examples_for(kb, "commentor", question, ctx.examples, ctx.num_experiences, ctx.experience)
    reply, calls = roles.comment(model, question, action, bank, ctx.structured_method)
    diagnosis = from_critique(reply, action, retrieval)
    if diagnosis.source == "fallback":
        diagnosis = fallback_from_rules(action, retrieval) or diagnosis
    return diagnosis, bank, calls
