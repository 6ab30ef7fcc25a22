"""The roles of the four LLM methods as a perfect model plays them on questions over documents.

Used when the prompt's question has a :class:`~evals.oracle.text_gold.TextRecord` (AdvHotpotQA).
A documents KB has passages and no relation the question could follow, so:

- entity roles (hybgrag's router, ssrag's entities, hydrarag's topics, mor's restriction) name
  the topics :func:`~evals.oracle.text_gold.topics` gives (supporting titles the question or
  prompt names, else the question's own capitalised phrases), typed with the first entity type
  the prompt lists, else ``entity``; no relations;
- hybgrag routes to the text module (one router call or two), ssrag as FACTUAL, hydrarag selects ``docs`` (all available
  sources when it is not offered); mor plans one node, the topic, restricted by its name;
- decomposition and rewriting keep the question; analysis writes the skyline
  ``topic - answer(entity)``;
- selections (hydrarag's path and web choices) take the items stating a supported gold answer
  first, then those naming a topic, then the given order, at most the width asked; hydrarag's
  path summary keeps the paths stating a supported answer or naming a topic, verbatim, repeats
  merged (none: no summary, the method keeps its paths);
- answer roles give the supported gold answers (:func:`~evals.oracle.text_gold.supported`: stated
  by a value that reads as real text), else "I do not know"; hydrarag's check says {No} and asks
  for the passage about the topics; hybgrag's validator says yes when a reference states one;
  its commentor, shown a rejected text action, says the answer is not among the top references.

No rule looks at the dataset's paragraphs to put text into retrieval: every name a reply gives
is in the question or in the prompt (the model's leak check enforces it).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from hybridrag.agents.hybgrag import roles as HG
from hybridrag.agents.mor import plan as MP
from hybridrag.agents.mor import roles as MR
from hybridrag.agents.ssrag import augment as SA
from hybridrag.agents.ssrag import retrieval as SRT
from hybridrag.agents.ssrag import routing as SRO
from hybridrag.agents.ssrag import unify as SU
from hybridrag.evals.oracle import ssrag as metaqa_ssrag
from hybridrag.evals.oracle.call import Call
from hybridrag.evals.oracle.prompt import answer_text
from hybridrag.evals.oracle.text_call import answered, entity_type, found_in, rec_of, topics_of
from hybridrag.evals.oracle.text_hydrarag import HY_ROLES

_WH = re.compile(r"\b(who|whom|whose|what|when|where|which|why|how)\b", re.IGNORECASE)

# --- hybgrag -----------------------------------------------------------------------------


def hg_router(call: Call) -> HG.RouterAction:
    """Router: the topics, no relation, the text module."""
    kind = entity_type(call.view)
    return HG.RouterAction(entities=[HG.TopicEntity(name=t, type=kind) for t in topics_of(call)], module="text")


def hg_extraction(call: Call) -> HG.RouterExtraction:
    """Router's first call (``router_calls=2``): the topics, no relation."""
    kind = entity_type(call.view)
    return HG.RouterExtraction(entities=[HG.TopicEntity(name=t, type=kind) for t in topics_of(call)])


def hg_module(call: Call) -> HG.RouterModule:
    """Router's second call: the text module."""
    return HG.RouterModule(module="text")


def hg_validator(call: Call) -> HG.Validation:
    """Validator: yes when a reference states a supported gold answer."""
    if found_in(call):
        return HG.Validation(reasoning="A reference states the answer.", verdict="yes")
    return HG.Validation(reasoning="No reference states the answer.", verdict="no")


def hg_commentor(call: Call) -> HG.Critique:
    """Commentor: the action fits the question; the answer is not among the top references."""
    return HG.Critique(
        reasoning="The question asks about the passages retrieved; the answer is not among the top references.",
        error_type="incorrect_intersection",
    )


def hg_answerer(call: Call) -> HG.Answer:
    """Answerer: the supported gold answers."""
    found = answered(call)
    return HG.Answer(reasoning="From the references." if found else "Not stated.", answer=answer_text(found))


# --- mor ---------------------------------------------------------------------------------


def mor_planner(call: Call) -> MP.Plan:
    """Planner: one node, the topic, restricted by its name."""
    kind, names = entity_type(call.view), topics_of(call)
    routes = [MP.PlanRoute(nodes=[MP.PlanNode(type=kind, restriction=n, relation="")]) for n in names[:1]]
    return MP.Plan(routes=routes or [MP.PlanRoute(nodes=[MP.PlanNode(type=kind, restriction="", relation="")])])


def mor_triplets(call: Call) -> MP.TripletPlan:
    """Planner (triplets): none; the target is the entity type."""
    return MP.TripletPlan(triplets=[], target=entity_type(call.view))


def mor_answerer(call: Call) -> MR.Answer:
    """Answerer: the supported gold answers."""
    found = answered(call)
    return MR.Answer(reasoning="From the retrieved text." if found else "Not stated.", answer=answer_text(found))


# --- ssrag -------------------------------------------------------------------------------


def ss_decompose(call: Call) -> SA.SubQuestions:
    """Decomposition: the question itself."""
    return SA.SubQuestions(sub_questions=[rec_of(call).question])


def ss_entities(call: Call) -> SA.KeyEntities:
    """Entities: the topics."""
    kind = entity_type(call.view)
    return SA.KeyEntities(entities=[SA.NamedEntity(name=t, type=kind) for t in topics_of(call)])


def ss_intent(call: Call) -> SA.IntentCues:
    """Intent: the question word, the topics as cues."""
    m = _WH.search(rec_of(call).question)
    word = m.group(1).lower() if m else "what"
    wh: Any = "who" if word in ("whom", "whose") else word
    return SA.IntentCues(intent=wh, subtopics=[], time_hints=[], factual_cues=topics_of(call))


def ss_rewrite(call: Call) -> SA.AugmentedQuery:
    """Rewrite: the question unchanged."""
    return SA.AugmentedQuery(query=rec_of(call).question)


def ss_route(call: Call) -> SRO.RouteLabel:
    """Routing: FACTUAL."""
    return SRO.RouteLabel(label="FACTUAL")


def ss_answer(call: Call) -> SU.Answer:
    """Answer: the supported answers."""
    found = answered(call)
    return SU.Answer(reasoning="From the contexts." if found else "Not stated.", answer=answer_text(found))


TEXT_ROLES: dict[type, Any] = {
    **HY_ROLES,
    HG.RouterAction: hg_router,
    HG.RouterExtraction: hg_extraction,
    HG.RouterModule: hg_module,
    HG.Validation: hg_validator,
    HG.Critique: hg_commentor,
    HG.Answer: hg_answerer,
    MP.Plan: mor_planner,
    MP.TripletPlan: mor_triplets,
    MR.Answer: mor_answerer,
    SA.SubQuestions: ss_decompose,
    SA.KeyEntities: ss_entities,
    SA.IntentCues: ss_intent,
    SA.AugmentedQuery: ss_rewrite,
    SRO.RouteLabel: ss_route,
    SRT.GraphText: metaqa_ssrag.graph_text,
    SU.Redundancy: metaqa_ssrag.redundancy,
    SU.Answer: ss_answer,
}


def rule_for(schema: type[BaseModel]) -> Any:
    """The text rule of ``schema`` (None when there is none)."""
    return TEXT_ROLES.get(schema)
