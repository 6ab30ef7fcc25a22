"""SSRAG's roles as a perfect model plays them.

Query understanding (the first decision; the drawn error goes to the role it belongs to):

- decomposition: the question itself as the only sub-question (a MetaQA question is one
  chain from one topic entity; its hops are not self-contained questions);
- entities: the gold topic entity with its type (wrong entity: a question word; missing:
  none);
- intent: the question word (``whom``/``whose`` → who), else from the answer's kind (a year
  → when, a person → who, otherwise what); no implicit aspects; the topic as factual cue,
  and as time hint when it is a year;
- rewrite: the question unchanged (MetaQA questions carry no acronyms and name their entity
  verbatim, which is all the rewrite rules ask for);
- routing: FACTUAL (MetaQA's facts are static; wrong module: TEMPORAL).

Neither needs gold (and neither looks a question up; their prompts hold none):

- graph-to-text: the node's facts as sentences, in the order given, each ending with a
  period;
- filter: a context is redundant when its text (name and text, normalised) is contained in
  an earlier context's.

Answer: the gold answers the contexts name, else "I do not know".

Later decisions (SSRAG's corrective loop: the role's earlier reply is an assistant turn and
the method's feedback follows it) repair the drawn error only when the feedback names it,
recognised from the method's own templates (:mod:`prompts.ssrag`):

- wrong entity: the wrong name quoted as unknown to the KB (``ENTITY_UNLINKED``) or as the
  entity of a failed search (``ANSWER_FAILED``), or the topic quoted among the question's
  names the KB knows (``ENTITY_KNOWN``): a perfect model told so extracts the topic;
- missing entity: the no-entity sentence (``ENTITY_NONE``), or a failed search with no
  entity quoted;
- wrong module: the router told that its TEMPORAL query holds no time cue (``ROUTE_NO_CUE``).
"""

from __future__ import annotations

import re
from typing import Any

from hybridrag.agents.ssrag import augment as A
from hybridrag.agents.ssrag import retrieval as RT
from hybridrag.agents.ssrag import routing as RO
from hybridrag.agents.ssrag import unify as U
from hybridrag.evals.oracle.call import Call, Rule
from hybridrag.evals.oracle.gold import PERSON_KINDS, norm
from hybridrag.evals.oracle.noise import Injected
from hybridrag.evals.oracle.prompt import answer_text, golds_in
from hybridrag.prompts import ssrag as P

METHOD = "ssrag"
_WH = re.compile(r"\b(who|whom|whose|what|when|where|which|why|how)\b", re.IGNORECASE)


def decompose(call: Call) -> A.SubQuestions:
    """Decomposition: the question as its only sub-question (the first decision of a run)."""
    call.begin(METHOD)
    return A.SubQuestions(sub_questions=[call.record.question])


def _after(prefix: str) -> re.Pattern:
    """A feedback sentence of the method (normalised template start) and the quoted names after it."""
    return re.compile(re.escape(norm(prefix)) + r'((?:\s*,?\s*"[^"]*")*)')


_UNLINKED = _after(P.ENTITY_UNLINKED.template.split("{")[0])
_KNOWN = _after(P.ENTITY_KNOWN.template.split("{")[0])
_FAILED = _after(P.ANSWER_FAILED.template.split("{")[0])
_NONE = norm(P.ENTITY_NONE.template)
_NO_CUE = norm(P.ROUTE_NO_CUE.template.split("(")[0])


def _quoted(rx: re.Pattern, text: str) -> set[str]:
    return {norm(n) for m in rx.finditer(text) for n in re.findall(r'"([^"]*)"', m.group(1))}


def names_entity_error(inj: Injected, feedback: str, rec) -> bool:
    """Whether the method's entity feedback names the drawn error (see the module docstring)."""
    failed = _quoted(_FAILED, feedback)
    match inj.type:
        case "wrong_entity":
            wrong = norm(inj.entity)
            return wrong in _quoted(_UNLINKED, feedback) | failed or norm(rec.topic) in _quoted(_KNOWN, feedback)
        case "missing_entity":
            return _NONE in feedback or (_FAILED.search(feedback) is not None and not failed)
    return False


def entities(call: Call) -> A.KeyEntities:
    """Entities: the gold topic entity; the drawn error on the first decision, kept until named."""
    rec, inj = call.record, call.injected(METHOD)
    if call.view.has_ai_turn:
        named = inj is not None and names_entity_error(inj, call.view.feedback(rec.question), rec)
        call.later(named)
        inj = None if named else inj
    if inj is not None and inj.type in ("wrong_entity", "missing_entity"):
        call.carried("entities")
        found = [A.NamedEntity(name=inj.entity, type=rec.topic_type)] if inj.type == "wrong_entity" else []
        return A.KeyEntities(entities=found)
    return A.KeyEntities(entities=[A.NamedEntity(name=rec.topic, type=rec.topic_type)])


def intent(call: Call) -> A.IntentCues:
    """Intent: question word (or the answer's kind), the topic as cue."""
    rec = call.record
    m = _WH.search(rec.question)
    wh: Any
    if m:
        word = m.group(1).lower()
        wh = "who" if word in ("whom", "whose") else word
    else:
        wh = "when" if rec.answer_kind == "year" else "who" if rec.answer_kind in PERSON_KINDS else "what"
    hints = [rec.topic] if rec.topic_type == "year" else []
    return A.IntentCues(intent=wh, subtopics=[], time_hints=hints, factual_cues=[rec.topic])


def rewrite(call: Call) -> A.AugmentedQuery:
    """Rewrite: the question unchanged."""
    return A.AugmentedQuery(query=call.record.question)


def route(call: Call) -> RO.RouteLabel:
    """Routing: FACTUAL (TEMPORAL when the drawn error is the wrong module, until feedback names it)."""
    inj = call.injected(METHOD)
    if call.view.has_ai_turn:
        named = inj is not None and inj.type == "wrong_module" and _NO_CUE in call.view.feedback()
        call.later(named)
        inj = None if named else inj
    if inj is not None and inj.type == "wrong_module":
        call.carried("router")
        return RO.RouteLabel(label="TEMPORAL")
    return RO.RouteLabel(label="FACTUAL")


def graph_text(call: Call) -> RT.GraphText:
    """Graph-to-text: the facts as sentences (entity block first, facts after it; no gold)."""
    blocks = [[v for _, v in b["fields"]] for b in call.view.blocks]
    facts = [f for b in (blocks[1:] if len(blocks) > 1 else blocks) for f in b if f.strip()]
    return RT.GraphText(text=" ".join(f if f.rstrip().endswith(".") else f"{f}." for f in facts))


def redundancy(call: Call) -> U.Redundancy:
    """Filter: contexts whose text an earlier context already contains (no gold)."""
    seen: list[str] = []
    redundant: list[int] = []
    for n, fields in call.view.numbered():
        text = norm(" ".join(v for values in fields.values() for v in values))
        if any(text in earlier for earlier in seen):
            redundant.append(n)
        seen.append(text)
    why = "These contexts repeat an earlier one." if redundant else "No context repeats an earlier one."
    return U.Redundancy(reasoning=why, redundant=redundant)


def answer(call: Call) -> U.Answer:
    """Answer: the gold answers the contexts name."""
    found = golds_in(call.record, call.view.evidence(call.record.question))
    return U.Answer(
        reasoning="The contexts name the answer." if found else "The contexts do not name it.",
        answer=answer_text(found),
    )


ROLES: dict[type, Rule] = {
    A.SubQuestions: decompose,
    A.KeyEntities: entities,
    A.IntentCues: intent,
    A.AugmentedQuery: rewrite,
    RO.RouteLabel: route,
    RT.GraphText: graph_text,
    U.Redundancy: redundancy,
    U.Answer: answer,
}
