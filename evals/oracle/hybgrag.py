"""HybGRAG's roles as a perfect model plays them (router, validator, commentor, answerer).

- Router: the gold topic entity with its type, the path's relations (each once), module
  ``hybrid``. On a KB whose schema has no relation types the prompt asks for each relation
  as a short phrase with words joined by "_"; the dataset's relation names (``directed_by``)
  are such phrases, so the answer is the same. Its first decision may carry the drawn error;
  a later decision (the prompt holds its earlier reply and the method's feedback) repairs it only when the feedback
  names it: an ``incorrect entity`` sentence quoting the wrong entity, an ``incorrect
  relation`` sentence quoting the wrong relation, ``incorrect relation`` or ``missing
  entity`` (which asks for "one more entity and relation") for a missing relation,
  ``incorrect retrieval module`` for the module, ``no entity`` or ``missing entity`` for a
  missing entity; an extra entity (``types=extra_entity``) when the feedback quotes it as
  incorrect or says the neighbourhoods do not intersect or miss the answer (both ask to
  remove one entity). The sentences are recognised from the method's own feedback templates
  (:data:`prompts.hybgrag.FEEDBACK`), wherever the prompt puts them.
- Router in two calls (``router_calls=2``): the extraction call is the router's rule without
  the module; the module call answers ``hybrid``, or ``text`` while a drawn wrong module is
  not yet named by the feedback.
- Validator: ``yes`` iff a shown reference's name is a gold answer (the references are
  answer candidates; an item that merely mentions the answer is not the answer).
- Commentor: compares the action shown after the question with the gold: the text module →
  incorrect retrieval module; no entity → no entity; an entity other than the topic or a
  relation off the path → incorrect entity/relation naming them; the topic or a path
  relation missing → missing entity (the schema's closest type: it asks for one more
  entity and relation); a correct action → incorrect intersection (the answer is not
  among the top references although the action fits the question).
- Answerer: the gold answers named in the references' data blocks, else "I do not know".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage

from hybridrag.agents.hybgrag import roles as R
from hybridrag.evals.oracle.call import Call, Rule
from hybridrag.evals.oracle.gold import RELATIONS, GoldRecord, norm
from hybridrag.evals.oracle.noise import Injected
from hybridrag.evals.oracle.prompt import answer_text, golds_in, phrase_in
from hybridrag.prompts import hybgrag as P

METHOD = "hybgrag"
_ITEM = re.compile(r"([^,:\n()]+?) \((\w+)\)")


def gold_action(rec: GoldRecord) -> dict:
    """The perfect router action."""
    return {"entities": [(rec.topic, rec.topic_type)], "relations": rec.unique_relations(), "module": "hybrid"}


def corrupt(action: dict, inj: Injected, rec: GoldRecord) -> dict:
    """The action with the drawn error in it."""
    out = dict(action)
    rels = list(action["relations"])
    gold_rel = rec.relations[inj.hop]
    match inj.type:
        case "wrong_entity":
            out["entities"] = [(inj.entity, rec.topic_type)]
        case "extra_entity":
            out["entities"] = [*action["entities"], (inj.entity, rec.topic_type)]
        case "wrong_relation":
            out["relations"] = [inj.relation if r == gold_rel else r for r in rels]
        case "missing_relation":
            out["relations"] = [r for r in rels if r != gold_rel]
        case "wrong_module":
            out["module"] = "text"
        case "missing_entity":
            out["entities"] = []
    return out


def _template_regex(text: str) -> re.Pattern:
    parts = norm(text).split("{names}")
    return re.compile("(.*?)".join(re.escape(p) for p in parts) if len(parts) > 1 else re.escape(parts[0]))


_FEEDBACK = {key: _template_regex(t.template) for key, t in P.FEEDBACK.items()}


def feedback_items(text: str) -> list[tuple[str, list[str]]]:
    """The method's feedback sentences found in ``text`` (normalised), with the names they quote."""
    out = []
    for key, rx in _FEEDBACK.items():
        for m in rx.finditer(text):
            names = [norm(n) for g in m.groups() for n in re.findall(r'"([^"]+)"', g)]
            out.append((key, names))
    return out


def names_error(inj: Injected, items: list[tuple[str, list[str]]]) -> bool:
    """Whether the feedback sentences name the drawn error (see the module docstring)."""
    keys = {k for k, _ in items}
    quoted = {k: {n for key, ns in items if key == k for n in ns} for k in keys}
    match inj.type:
        case "wrong_entity":
            return norm(inj.entity) in quoted.get("incorrect_entity", set())
        case "extra_entity":  # naming it, or asking to drop one of the entities
            return norm(inj.entity) in quoted.get("incorrect_entity", set()) or bool(
                keys & {"no_intersection", "incorrect_intersection"}
            )
        case "wrong_relation":
            return norm(inj.relation) in quoted.get("incorrect_relation", set())
        case "missing_relation":
            return bool(keys & {"incorrect_relation", "missing_entity"})
        case "wrong_module":
            return "incorrect_retrieval_module" in keys
        case "missing_entity":
            return bool(keys & {"no_entity", "missing_entity"})
    return False


def _decided_action(call: Call, carries: Callable[[Any], bool]) -> dict:
    """The gold action, corrupted by the drawn error while the feedback has not named it (``carries(inj)``)."""
    rec = call.record
    if call.view.has_ai_turn:
        inj = call.injected(METHOD)
        named = inj is not None and names_error(inj, feedback_items(call.view.feedback(rec.question)))
        call.later(named)
    else:
        inj, named = call.begin(METHOD), False
    action = gold_action(rec)
    if inj is not None and not named and carries(inj):
        action = corrupt(action, inj, rec)
        call.carried("router")
    return action


def router(call: Call) -> R.RouterAction:
    """Router: the gold action; the drawn error on the first decision, kept until named."""
    action = _decided_action(call, lambda inj: True)
    return R.RouterAction(
        entities=[R.TopicEntity(name=n, type=t) for n, t in action["entities"]],
        relations=action["relations"],
        module=action["module"],
    )


def extraction(call: Call) -> R.RouterExtraction:
    """Router's first call under ``router_calls=2``: the router's rule without the module."""
    action = _decided_action(call, lambda inj: inj.type != "wrong_module")  # the module call carries that one
    entities = [R.TopicEntity(name=n, type=t) for n, t in action["entities"]]
    return R.RouterExtraction(entities=entities, relations=action["relations"])


def module(call: Call) -> R.RouterModule:
    """Router's second call under ``router_calls=2``: ``hybrid``, or ``text`` while a drawn wrong module is unnamed.

    The first decision's module call holds one assistant turn (the extraction); a later one holds more.
    """
    rec, inj = call.record, call.injected(METHOD)
    if inj is None or inj.type != "wrong_module":
        return R.RouterModule(module="hybrid")
    later = sum(isinstance(m, AIMessage) for m in call.view.messages) > 1
    if later and names_error(inj, feedback_items(call.view.feedback(rec.question))):
        return R.RouterModule(module="hybrid")
    call.carried("router")
    return R.RouterModule(module="text")


def validator(call: Call) -> R.Validation:
    """Validator: yes iff a shown reference is a gold answer."""
    rec = call.record
    names = [v for _, f in call.view.numbered() for v in f.get("name", [])]
    hit = [a for a in rec.answers if norm(a) in {norm(n) for n in names}]
    if hit:
        return R.Validation(reasoning="A reference is an entity the question asks for.", verdict="yes")
    return R.Validation(reasoning="No reference is an entity the question asks for.", verdict="no")


def _shown_action(call: Call) -> tuple[str, list[str], list[str], bool]:
    """(module, entity names, relations, topic shown) of the action after the question."""
    human, q = norm(call.view.human), norm(call.record.question)
    at = human.rfind(q)
    tail = human[at + len(q) :] if at >= 0 else human
    words = re.findall(r"\b(text|hybrid)\b", tail)
    module = words[0] if words else "hybrid"
    relations = [r for r in RELATIONS if re.search(rf"(?<!\w){r}(?!\w)", tail)]
    entities = [name.strip() for name, _ in _ITEM.findall(tail)]
    return module, entities, relations, phrase_in(call.record.topic, tail)


def commentor(call: Call) -> R.Critique:
    """Commentor: the rejected action compared with the gold (see the module docstring)."""
    rec = call.record
    module, entities, relations, topic_shown = _shown_action(call)
    wrong_ents = [e for e in entities if norm(e) not in norm(rec.topic)]
    wrong_rels = [r for r in relations if r not in rec.relations]
    missing = [r for r in rec.unique_relations() if r not in relations]
    if module == "text":
        return R.Critique(
            reasoning="The question names an entity and relations: use the graph.",
            error_type="incorrect_retrieval_module",
        )
    if not entities:
        return R.Critique(reasoning="The question names an entity but none was extracted.", error_type="no_entity")
    if wrong_ents or wrong_rels:
        return R.Critique(
            reasoning="An extracted entity or relation does not fit the question.",
            error_type="incorrect_entity_relation",
            wrong_entities=wrong_ents,
            wrong_relations=wrong_rels,
        )
    if not topic_shown or missing:
        what = f"relation {', '.join(missing)}" if missing else "the topic entity"
        return R.Critique(reasoning=f"The action misses {what}.", error_type="missing_entity")
    return R.Critique(
        reasoning="The entities and relations fit the question; the answer is not among the top references.",
        error_type="incorrect_intersection",
    )


def answerer(call: Call) -> R.Answer:
    """Answerer: the gold answers the references name."""
    found = golds_in(call.record, call.view.evidence(call.record.question))
    reasoning = "The references name the answer." if found else "The references do not name the answer."
    return R.Answer(reasoning=reasoning, answer=answer_text(found))


ROLES: dict[type, Rule] = {
    R.RouterAction: router,
    R.RouterExtraction: extraction,
    R.RouterModule: module,
    R.Validation: validator,
    R.Critique: commentor,
    R.Answer: answerer,
}
