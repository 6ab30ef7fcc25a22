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
from typing import Any, cast

from pydantic import BaseModel

from hybridrag.agents.hybgrag import roles as HG
from hybridrag.agents.hydrarag import roles as HY
from hybridrag.agents.mor import plan as MP
from hybridrag.agents.mor import roles as MR
from hybridrag.agents.ssrag import augment as SA
from hybridrag.agents.ssrag import retrieval as SRT
from hybridrag.agents.ssrag import routing as SRO
from hybridrag.agents.ssrag import unify as SU
from hybridrag.evals.oracle import ssrag as metaqa_ssrag
from hybridrag.evals.oracle.call import Call
from hybridrag.evals.oracle.gold import norm
from hybridrag.evals.oracle.prompt import PromptView, answer_text, phrase_in
from hybridrag.evals.oracle.text_gold import TextRecord, supported, topics

_TYPES = re.compile(r"entity types?:[ \t]*([^\n]*)", re.IGNORECASE)
_WH = re.compile(r"\b(who|whom|whose|what|when|where|which|why|how)\b", re.IGNORECASE)
SOURCES = ("kg", "docs", "web")


def _rec(call: Call) -> TextRecord:
    return cast(TextRecord, call.record)


def _found(call: Call) -> list[str]:
    rec = _rec(call)
    return supported(rec, call.view.evidence(rec.question))


def _answered(call: Call) -> list[str]:
    """The supported gold answers of an answer prompt, noted per question (``GoldSet.answer_shown``)."""
    found = _found(call)
    shown = call.gold.answer_shown
    shown[call.record.id] = shown.get(call.record.id, False) or bool(found)
    return found


def entity_type(view: PromptView) -> str:
    """The first entity type the prompt lists (``entity`` when it lists none)."""
    m = _TYPES.search(view.text)
    first = re.split(r"[,;|]", m.group(1))[0].strip(" .`'\"[]") if m else ""
    return first if first and not first.startswith("(") and first.casefold() != "none" else "entity"


def _topics(call: Call) -> list[str]:
    return topics(_rec(call), call.view)


# --- hybgrag -----------------------------------------------------------------------------


def hg_router(call: Call) -> HG.RouterAction:
    """Router: the topics, no relation, the text module."""
    kind = entity_type(call.view)
    return HG.RouterAction(entities=[HG.TopicEntity(name=t, type=kind) for t in _topics(call)], module="text")


def hg_extraction(call: Call) -> HG.RouterExtraction:
    """Router's first call (``router_calls=2``): the topics, no relation."""
    kind = entity_type(call.view)
    return HG.RouterExtraction(entities=[HG.TopicEntity(name=t, type=kind) for t in _topics(call)])


def hg_module(call: Call) -> HG.RouterModule:
    """Router's second call: the text module."""
    return HG.RouterModule(module="text")


def hg_validator(call: Call) -> HG.Validation:
    """Validator: yes when a reference states a supported gold answer."""
    if _found(call):
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
    found = _answered(call)
    return HG.Answer(reasoning="From the references." if found else "Not stated.", answer=answer_text(found))


# --- mor ---------------------------------------------------------------------------------


def mor_planner(call: Call) -> MP.Plan:
    """Planner: one node, the topic, restricted by its name."""
    kind, names = entity_type(call.view), _topics(call)
    routes = [MP.PlanRoute(nodes=[MP.PlanNode(type=kind, restriction=n, relation="")]) for n in names[:1]]
    return MP.Plan(routes=routes or [MP.PlanRoute(nodes=[MP.PlanNode(type=kind, restriction="", relation="")])])


def mor_triplets(call: Call) -> MP.TripletPlan:
    """Planner (triplets): none; the target is the entity type."""
    return MP.TripletPlan(triplets=[], target=entity_type(call.view))


def mor_answerer(call: Call) -> MR.Answer:
    """Answerer: the supported gold answers."""
    found = _answered(call)
    return MR.Answer(reasoning="From the retrieved text." if found else "Not stated.", answer=answer_text(found))


# --- hydrarag ----------------------------------------------------------------------------


def hy_topics(call: Call) -> HY.TopicEntities:
    """Topic extraction: the topics."""
    return HY.TopicEntities(entities=_topics(call))


def _skyline(call: Call) -> str:
    return " - ".join([" and ".join(_topics(call)) or "question", "answer(entity)"])


def hy_analysis(call: Call) -> HY.QuestionAnalysis:
    """Analysis: the question as its only sub-question, skyline ``topic - answer(entity)``."""
    return HY.QuestionAnalysis(split_questions=[_rec(call).question], skyline=_skyline(call))


def hy_selector(call: Call) -> HY.SourceChoice:
    """Source selection: the documents, among the available sources."""
    outside = re.sub(r"<data[^>]*>.*?</data>", " ", call.view.human, flags=re.DOTALL)
    outside = norm(outside).replace(norm(_rec(call).question), " ")
    available = [s for s in SOURCES if re.search(rf"\b{s}\b", outside)]
    chosen = [s for s in ("docs",) if s in available] or available
    return HY.SourceChoice(reasoning="Facts stated in documents.", sources=cast(Any, chosen))


def hy_text_paths(call: Call) -> HY.TextPaths:
    """Paragraph → paths: none (the method keeps the sentences)."""
    return HY.TextPaths(paths=[])


def _text(fields: dict[str, list[str]]) -> str:
    return " ".join(v for values in fields.values() for v in values)


def hy_choice(call: Call) -> HY.Choice:
    """Selection: items stating a supported answer, then naming a topic, then the given order."""
    rec, blocks, names = _rec(call), call.view.numbered(), _topics(call)
    scored = []
    for n, f in blocks:
        text = _text(f)
        scored.append((-(2 if supported(rec, [text]) else 1 if any(phrase_in(t, text) for t in names) else 0), n))
    width = call.view.width(3)
    picked = [n for _, n in sorted(scored)][:width]
    return HY.Choice(reasoning="Items stating the answer or naming the question's entities first.", selected=picked)


def hy_refine(call: Call) -> HY.Refinement:
    """Refinement: the items stating a supported answer (all shown items when none does), verbatim."""
    rec = _rec(call)
    texts = [_text(f) for _, f in call.view.numbered()]
    return HY.Refinement(summary="; ".join([t for t in texts if supported(rec, [t])] or texts))


def hy_path_summary(call: Call) -> HY.PathSummary:
    """Path summary: the paths stating a supported answer or naming a topic, verbatim, repeats merged."""
    rec, names = _rec(call), _topics(call)
    groups: dict[str, list[int]] = {}
    for n, f in call.view.numbered():
        text = _text(f)
        if supported(rec, [text]) or any(phrase_in(t, text) for t in names):
            groups.setdefault(" - ".join(t.strip() for t in text.split("→")), []).append(n)
    return HY.PathSummary(paths=[HY.SummaryPath(path=p, sources=ns) for p, ns in groups.items()])


def hy_check(call: Call) -> HY.AnswerCheck:
    """Answer check: {Yes} with the supported answers, else {No} asking for the topics' passages."""
    found = _answered(call)
    if found:
        return HY.AnswerCheck(reasoning="The evidence states it.", sufficient="yes", answer=answer_text(found))
    about = " and ".join(_topics(call)) or "the question's entities"
    return HY.AnswerCheck(reasoning="Not stated.", sufficient="no", answer="", missing=f"a passage about {about}")


def hy_final(call: Call) -> HY.FinalAnswer:
    """Final answer: the supported answers, else an abstention."""
    found = _answered(call)
    return HY.FinalAnswer(reasoning="From the evidence." if found else "Not stated.", answer=answer_text(found))


def hy_follow_up(call: Call) -> HY.FollowUp:
    """Follow-up: the question again, its topics."""
    return HY.FollowUp(
        missing="a passage stating the answer",
        question=_rec(call).question,
        skyline=_skyline(call),
        topic_entities=_topics(call),
    )


def hy_predict(call: Call) -> HY.Predictions:
    """Predictions: the supported answers the shown items state (at most three)."""
    rec = _rec(call)
    found = supported(rec, [_text(f) for _, f in call.view.numbered()])[:3]
    return HY.Predictions(predictions=[HY.Prediction(answer=a, skyline=_skyline(call)) for a in found])


# --- ssrag -------------------------------------------------------------------------------


def ss_decompose(call: Call) -> SA.SubQuestions:
    """Decomposition: the question itself."""
    return SA.SubQuestions(sub_questions=[_rec(call).question])


def ss_entities(call: Call) -> SA.KeyEntities:
    """Entities: the topics."""
    kind = entity_type(call.view)
    return SA.KeyEntities(entities=[SA.NamedEntity(name=t, type=kind) for t in _topics(call)])


def ss_intent(call: Call) -> SA.IntentCues:
    """Intent: the question word, the topics as cues."""
    m = _WH.search(_rec(call).question)
    word = m.group(1).lower() if m else "what"
    wh: Any = "who" if word in ("whom", "whose") else word
    return SA.IntentCues(intent=wh, subtopics=[], time_hints=[], factual_cues=_topics(call))


def ss_rewrite(call: Call) -> SA.AugmentedQuery:
    """Rewrite: the question unchanged."""
    return SA.AugmentedQuery(query=_rec(call).question)


def ss_route(call: Call) -> SRO.RouteLabel:
    """Routing: FACTUAL."""
    return SRO.RouteLabel(label="FACTUAL")


def ss_answer(call: Call) -> SU.Answer:
    """Answer: the supported answers."""
    found = _answered(call)
    return SU.Answer(reasoning="From the contexts." if found else "Not stated.", answer=answer_text(found))


TEXT_ROLES: dict[type, Any] = {
    HG.RouterAction: hg_router,
    HG.RouterExtraction: hg_extraction,
    HG.RouterModule: hg_module,
    HG.Validation: hg_validator,
    HG.Critique: hg_commentor,
    HG.Answer: hg_answerer,
    MP.Plan: mor_planner,
    MP.TripletPlan: mor_triplets,
    MR.Answer: mor_answerer,
    HY.TopicEntities: hy_topics,
    HY.QuestionAnalysis: hy_analysis,
    HY.SourceChoice: hy_selector,
    HY.TextPaths: hy_text_paths,
    HY.Choice: hy_choice,
    HY.Refinement: hy_refine,
    HY.PathSummary: hy_path_summary,
    HY.AnswerCheck: hy_check,
    HY.FinalAnswer: hy_final,
    HY.FollowUp: hy_follow_up,
    HY.Predictions: hy_predict,
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
